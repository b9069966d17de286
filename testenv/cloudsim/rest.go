package cloudsim

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
)

// Token is the bearer token the REST emulators (Lambda, Nscale) accept.
const Token = "sim-token-0123456789"

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// restGate checks the method, the token, the parameters and the
// throttling fault; it reports whether the request may proceed.
func (b *base) restGate(w http.ResponseWriter, r *http.Request, known ...string) bool {
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "GET only"})
		return false
	}
	if r.Header.Get("Authorization") != "Bearer "+Token {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid token"})
		return false
	}
	if b.throttle() {
		w.Header().Set("Retry-After", "0")
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "rate limited"})
		return false
	}
	if k := unknownParam(r.URL.Query(), func(k string) bool { return slices.Contains(known, k) }); k != "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unknown query parameter " + k})
		return false
	}
	return true
}

func intParam(r *http.Request, key string, def, lo, hi int) (int, bool) {
	v := r.URL.Query().Get(key)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= lo && n <= hi
}

// Lambda emulates Lambda's GET /api/v1/topology/instance.
type Lambda struct {
	*base
}

// NewLambda returns the Lambda emulator of instances.
func NewLambda(instances []Instance, f Faults) *Lambda { return &Lambda{base: newBase(instances, f)} }

type lambdaNVLink struct {
	DomainID string `json:"domain_id"`
	CliqueID string `json:"clique_id,omitempty"`
}

type lambdaHop struct {
	ID string `json:"id"`
}

type lambdaItem struct {
	ID          string        `json:"id"`
	NetworkPath []lambdaHop   `json:"networkPath"`
	NVLink      *lambdaNVLink `json:"nvlink"`
}

// ServeHTTP implements http.Handler.
func (l *Lambda) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/topology/instance" {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
		return
	}
	if !l.restGate(w, r, "workspace_id", "region", "page_size", "page_token") {
		return
	}
	size, ok := intParam(r, "page_size", 100, 1, 1000)
	if !ok {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad page_size"})
		return
	}
	items, next, num, ok := l.tokenPage("", r.URL.Query().Get("page_token"), size)
	if !ok {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad page_token"})
		return
	}
	if num == l.faults.ServerErrorPage {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal"})
		return
	}
	resp := struct {
		Data      []lambdaItem `json:"data"`
		PageToken *string      `json:"page_token"`
	}{Data: []lambdaItem{}}
	if next != "" {
		resp.PageToken = &next
	}
	for _, in := range items {
		it := lambdaItem{ID: in.ID, NetworkPath: []lambdaHop{}}
		for _, s := range in.Path {
			it.NetworkPath = append(it.NetworkPath, lambdaHop{ID: s})
		}
		if in.Domain != "" {
			it.NVLink = &lambdaNVLink{DomainID: in.Domain, CliqueID: in.SubDomain}
		}
		resp.Data = append(resp.Data, it)
	}
	writeJSON(w, http.StatusOK, resp)
}

// Nscale emulates Nscale's Radar GET /v1/topology (instance_id) and GET
// /v2/topology (server_id; limit/offset, until an empty page) and the
// Instance API's GET /v2/instances.
type Nscale struct {
	*base
}

// NewNscale returns the Nscale emulator of instances.
func NewNscale(instances []Instance, f Faults) *Nscale { return &Nscale{base: newBase(instances, f)} }

type nscaleItem struct {
	InstanceID      string   `json:"instance_id,omitempty"`
	ServerID        string   `json:"server_id,omitempty"`
	NetworkNodePath []string `json:"network_node_path"`
	BlockID         string   `json:"block_id,omitempty"`
}

// ServeHTTP implements http.Handler.
func (n *Nscale) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/topology", "/v2/topology":
		n.topology(w, r)
	case "/v2/instances":
		if !n.restGate(w, r, "organizationID", "regionID") {
			return
		}
		type meta struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		}
		out := []map[string]meta{}
		for _, in := range n.instances {
			out = append(out, map[string]meta{"metadata": {ID: in.ID, Name: in.Name}})
		}
		writeJSON(w, http.StatusOK, out)
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
	}
}

func (n *Nscale) topology(w http.ResponseWriter, r *http.Request) {
	if !n.restGate(w, r, "limit", "offset") {
		return
	}
	if r.Header.Get("X-Organization") == "" || r.Header.Get("X-Region") == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "X-Organization and X-Region are required"})
		return
	}
	limit, ok1 := intParam(r, "limit", 100, 1, 1000)
	offset, ok2 := intParam(r, "offset", 0, 0, 1<<30)
	if !ok1 || !ok2 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad limit or offset"})
		return
	}
	if n.faults.RepeatToken && offset >= limit {
		offset = limit // every page after the first is the second again
	}
	items, _, num := n.page(offset, limit)
	if num == n.faults.ServerErrorPage {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal"})
		return
	}
	resp := struct {
		Results []nscaleItem `json:"results"`
	}{Results: []nscaleItem{}}
	for _, in := range items {
		it := nscaleItem{InstanceID: in.ID, NetworkNodePath: reversed(in.Path), BlockID: in.Domain}
		if r.URL.Path == "/v2/topology" {
			it.InstanceID, it.ServerID = "", in.ID
		}
		resp.Results = append(resp.Results, it)
	}
	writeJSON(w, http.StatusOK, resp)
}
