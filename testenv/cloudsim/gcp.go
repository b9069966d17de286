package cloudsim

import (
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
)

// GCP emulates Compute Engine's instances.list and
// instances.aggregatedList (REST, JSON). An instance's closest-first path
// is served as physicalHostTopology {subblock, block, cluster}; its ID is
// a number derived from the model's instance ID (GCPID).
type GCP struct {
	*base
	project string
}

// NewGCP returns the Compute emulator of instances in project.
func NewGCP(project string, instances []Instance, f Faults) *GCP {
	return &GCP{base: newBase(instances, f), project: project}
}

// GCPID is the numeric instance ID the emulator serves for a model
// instance ID.
func GCPID(id string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return strconv.FormatUint(h.Sum64()>>1, 10)
}

func gcpError(w http.ResponseWriter, status int, reason, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg,
		"errors": []map[string]string{{"domain": "global", "reason": reason, "message": msg}}}})
}

func (g *GCP) item(in Instance) map[string]any {
	it := map[string]any{"id": GCPID(in.ID), "name": in.Name, "status": "RUNNING",
		"zone": "https://www.googleapis.com/compute/v1/projects/" + g.project + "/zones/" + in.Zone}
	if in.Type != "" {
		it["machineType"] = "https://www.googleapis.com/compute/v1/projects/" + g.project + "/zones/" + in.Zone + "/machineTypes/" + in.Type
	}
	if len(in.Path) > 0 {
		topo := map[string]string{"host": "h-" + GCPID(in.ID)}
		for i, k := range []string{"subblock", "block", "cluster"} {
			if i < len(in.Path) {
				topo[k] = in.Path[i]
			}
		}
		it["resourceStatus"] = map[string]any{"physicalHostTopology": topo}
	} else {
		it["resourceStatus"] = map[string]any{}
	}
	return it
}

// ServeHTTP implements http.Handler.
func (g *GCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// compute/v1/projects/{p}/zones/{z}/instances or compute/v1/projects/{p}/aggregated/instances
	zonal := len(parts) == 7 && parts[4] == "zones" && parts[6] == "instances"
	aggregated := len(parts) == 6 && parts[4] == "aggregated" && parts[5] == "instances"
	if r.Method != http.MethodGet || len(parts) < 4 || parts[0] != "compute" || parts[1] != "v1" || parts[2] != "projects" || (!zonal && !aggregated) {
		gcpError(w, http.StatusNotFound, "notFound", "unknown path "+r.URL.Path)
		return
	}
	if parts[3] != g.project {
		gcpError(w, http.StatusNotFound, "notFound", "unknown project")
		return
	}
	if g.throttle() {
		gcpError(w, http.StatusForbidden, "rateLimitExceeded", "Rate Limit Exceeded")
		return
	}
	// The method's own parameters, and the system parameters every
	// Google API takes: $alt (cloud.google.com/go), alt and prettyPrint
	// (google.golang.org/api).
	known := map[string]bool{"$alt": true, "alt": true, "prettyPrint": true, "fields": true,
		"filter": true, "maxResults": true, "orderBy": true, "pageToken": true, "returnPartialSuccess": true}
	if aggregated {
		known["includeAllScopes"], known["serviceProjectNumber"] = true, true
	}
	if k := unknownParam(r.URL.Query(), func(k string) bool { return known[k] }); k != "" {
		gcpError(w, http.StatusBadRequest, "invalidParameter", "Invalid field selection "+k)
		return
	}
	size, ok := intParam(r, "maxResults", 500, 0, 500)
	if !ok {
		gcpError(w, http.StatusBadRequest, "invalid", "maxResults must be 0-500")
		return
	}
	if size == 0 {
		size = 500
	}
	src := g.base
	if zonal {
		src = g.inZone(parts[5])
	}
	tok := r.URL.Query().Get("pageToken")
	items, next, num, ok := src.tokenPage("p", tok, size)
	if !ok {
		gcpError(w, http.StatusBadRequest, "invalid", "Invalid value for pageToken")
		return
	}
	if num == g.faults.ServerErrorPage {
		gcpError(w, http.StatusInternalServerError, "backendError", "Internal error")
		return
	}
	resp := map[string]any{}
	if next != "" {
		resp["nextPageToken"] = next
	}
	if zonal {
		list := []map[string]any{}
		for _, in := range items {
			list = append(list, g.item(in))
		}
		resp["kind"], resp["items"] = "compute#instanceList", list
	} else {
		scopes := map[string]any{"zones/sim-empty-1a": map[string]any{"warning": map[string]string{
			"code": "NO_RESULTS_ON_PAGE", "message": "There are no results for scope 'zones/sim-empty-1a' on this page."}}}
		for _, in := range items {
			key := "zones/" + in.Zone
			s, _ := scopes[key].(map[string]any)
			if s == nil {
				s = map[string]any{"instances": []map[string]any{}}
				scopes[key] = s
			}
			s["instances"] = append(s["instances"].([]map[string]any), g.item(in))
		}
		resp["kind"], resp["items"] = "compute#instanceAggregatedList", scopes
	}
	writeJSON(w, http.StatusOK, resp)
}
