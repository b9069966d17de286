package cloudsim

import (
	"net/http"
	"strings"
)

// OCI emulates the Identity ListAvailabilityDomains and Core
// ListComputeHosts / GetComputeHost calls (API version 20160918). Each
// instance is an occupied compute host: its zone is its availability
// domain, its closest-first path the local block, network block and HPC
// island (tiers the model lacks are left out), its domain the GPU memory
// fabric and its sub-domain the rack in additionalData. Requests must
// carry an OCI signature ("Signature ..." Authorization header); the
// signature itself is not verified.
type OCI struct {
	*base
	tenancy string
}

// NewOCI returns the OCI emulator of instances in tenancy.
func NewOCI(tenancy string, instances []Instance, f Faults) *OCI {
	return &OCI{base: newBase(instances, f), tenancy: tenancy}
}

// OCIHostID is the compute host OCID served for a model instance ID.
func OCIHostID(id string) string { return "ocid1.computehost.oc1.sim." + id }

func ociError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("opc-request-id", "sim-req")
	writeJSON(w, status, map[string]string{"code": code, "message": msg})
}

func (o *OCI) host(in Instance, full bool) map[string]any {
	h := map[string]any{"id": OCIHostID(in.ID), "availabilityDomain": in.Zone, "compartmentId": o.tenancy,
		"faultDomain": "FAULT-DOMAIN-1", "shape": "BM.GPU.GB200.4", "health": "HEALTHY", "lifecycleState": "OCCUPIED",
		"hasImpactedComponents": false, "timeCreated": "2026-01-01T00:00:00.000Z", "timeUpdated": "2026-01-02T00:00:00.000Z",
		"instanceId": in.ID, "displayName": "host-" + in.Name}
	if in.Type != "" {
		h["shape"] = in.Type
	}
	for i, k := range []string{"localBlockId", "networkBlockId", "hpcIslandId"} {
		if i < len(in.Path) {
			h[k] = in.Path[i]
		}
	}
	if in.Domain != "" {
		h["gpuMemoryFabricId"] = in.Domain
	}
	if full && in.SubDomain != "" {
		h["additionalData"] = map[string]any{"locationDetails": map[string]any{"rack": in.SubDomain}}
	}
	return h
}

// ServeHTTP implements http.Handler.
func (o *OCI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		ociError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "GET only")
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Signature ") || r.Header.Get("Date") == "" && r.Header.Get("x-date") == "" {
		ociError(w, http.StatusUnauthorized, "NotAuthenticated", "The required information to complete authentication was not provided.")
		return
	}
	if o.throttle() {
		ociError(w, http.StatusTooManyRequests, "TooManyRequests", "Too many requests for the tenant")
		return
	}
	q := r.URL.Query()
	path := strings.TrimPrefix(r.URL.Path, "/20160918/")
	switch {
	case path == "availabilityDomains":
		if k := unknownParam(q, func(k string) bool { return k == "compartmentId" }); k != "" || q.Get("compartmentId") != o.tenancy {
			ociError(w, http.StatusNotFound, "NotAuthorizedOrNotFound", "Authorization failed or requested resource not found.")
			return
		}
		var ads []map[string]string
		for _, in := range o.instances {
			if !containsAD(ads, in.Zone) {
				ads = append(ads, map[string]string{"compartmentId": o.tenancy, "id": "ocid1.availabilitydomain.sim." + in.Zone, "name": in.Zone})
			}
		}
		w.Header().Set("opc-request-id", "sim-req")
		writeJSON(w, http.StatusOK, ads)
	case path == "computeHosts":
		o.list(w, r)
	case strings.HasPrefix(path, "computeHosts/"):
		id := strings.TrimPrefix(path, "computeHosts/")
		for _, in := range o.instances {
			if OCIHostID(in.ID) == id {
				w.Header().Set("opc-request-id", "sim-req")
				writeJSON(w, http.StatusOK, o.host(in, true))
				return
			}
		}
		ociError(w, http.StatusNotFound, "NotAuthorizedOrNotFound", "Authorization failed or requested resource not found.")
	default:
		ociError(w, http.StatusNotFound, "NotAuthorizedOrNotFound", "unknown path "+r.URL.Path)
	}
}

func containsAD(ads []map[string]string, name string) bool {
	for _, a := range ads {
		if a["name"] == name {
			return true
		}
	}
	return false
}

// list answers ListComputeHosts: one page of an availability domain.
func (o *OCI) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	known := map[string]bool{"compartmentId": true, "availabilityDomain": true, "displayName": true, "networkResourceId": true,
		"limit": true, "page": true, "sortBy": true, "sortOrder": true, "computeHostLifecycleState": true,
		"computeHostHealth": true, "computeHostGroupId": true, "computeHostInSubtree": true}
	if k := unknownParam(q, func(k string) bool { return known[k] }); k != "" {
		ociError(w, http.StatusBadRequest, "InvalidParameter", "unknown query parameter "+k)
		return
	}
	if q.Get("compartmentId") != o.tenancy {
		ociError(w, http.StatusNotFound, "NotAuthorizedOrNotFound", "Authorization failed or requested resource not found.")
		return
	}
	size, ok := intParam(r, "limit", 100, 1, 1000)
	if !ok {
		ociError(w, http.StatusBadRequest, "InvalidParameter", "limit must be 1-1000")
		return
	}
	src := o.base
	if ad := q.Get("availabilityDomain"); ad != "" {
		src = o.inZone(ad)
	}
	items, next, num, ok := src.tokenPage("p", q.Get("page"), size)
	if !ok {
		ociError(w, http.StatusBadRequest, "InvalidParameter", "invalid page")
		return
	}
	if num == o.faults.ServerErrorPage {
		ociError(w, http.StatusInternalServerError, "InternalServerError", "Internal error")
		return
	}
	if next != "" {
		w.Header().Set("opc-next-page", next)
	}
	list := make([]map[string]any, 0, len(items))
	for _, in := range items {
		list = append(list, o.host(in, false))
	}
	w.Header().Set("opc-request-id", "sim-req")
	writeJSON(w, http.StatusOK, map[string]any{"items": list})
}
