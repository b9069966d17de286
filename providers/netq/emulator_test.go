package netq

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	stdlog "log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// emulator is a NetQ server written from the documented flow: login,
// premises selection, topology-graph fetch. It checks bodies strictly,
// rejects unknown query parameters and wrong tokens, and can be told to
// fail requests.
type emulator struct {
	user, pass string
	premises   []Premises
	graphs     map[int64][]Graph // opid -> fetch-topology answer
	// failures are served, in order, before any real answer.
	failures []failure
	// echo makes a 401 quote what the client sent, as a careless server
	// would, to check that errors scrub secrets.
	echo bool
	// rejectFetch makes every topology fetch fail with 401.
	rejectFetch bool
	// computeNodes is NMX's compute-node list; nil serves no NMX (404).
	computeNodes []map[string]any

	mu    sync.Mutex
	calls []string
}

type failure struct {
	status     int
	retryAfter string
}

const loginToken = "login-token-8d3f"

func premisesToken(opid int64) string { return fmt.Sprintf("premises-token-%d-77aa", opid) }

func (e *emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.calls = append(e.calls, r.Method+" "+r.URL.Path)
	var fail *failure
	if len(e.failures) > 0 {
		fail = &e.failures[0]
		e.failures = e.failures[1:]
	}
	e.mu.Unlock()
	if fail != nil {
		if fail.retryAfter != "" {
			w.Header().Set("Retry-After", fail.retryAfter)
		}
		http.Error(w, `{"message":"try later"}`, fail.status)
		return
	}
	body, _ := io.ReadAll(r.Body)
	auth := r.Header.Get("Authorization")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/netq/auth/v1/login":
		e.login(w, r, body)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/netq/auth/v1/select/opid/"):
		if !e.noQuery(w, r) || !e.bearer(w, auth, loginToken) {
			return
		}
		opid, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/api/netq/auth/v1/select/opid/"), 10, 64)
		if _, ok := e.graphs[opid]; err != nil || !ok {
			http.Error(w, `{"message":"no such premises"}`, http.StatusNotFound)
			return
		}
		writeJSON(w, map[string]any{"access_token": premisesToken(opid), "customer_id": 0, "id": "admin"})
	case r.Method == http.MethodPost && r.URL.Path == "/api/netq/telemetry/v1/object/topologygraph/fetch-topology":
		if r.URL.RawQuery != "timestamp=0" {
			http.Error(w, `{"message":"bad query"}`, http.StatusBadRequest)
			return
		}
		var req map[string]any
		if err := json.Unmarshal(body, &req); err != nil || len(req) != 2 || req["subgroupNestingDepth"] != 2.0 {
			http.Error(w, `{"message":"bad body"}`, http.StatusBadRequest)
			return
		}
		for opid, g := range e.graphs {
			if auth == "Bearer "+premisesToken(opid) && !e.rejectFetch {
				writeJSON(w, g)
				return
			}
		}
		e.unauthorized(w, auth)
	case r.Method == http.MethodGet && r.URL.Path == "/nmx/v1/compute-nodes" && e.computeNodes != nil:
		if !e.noQuery(w, r) {
			return
		}
		if auth != basicAuth(e.user, e.pass) {
			e.unauthorized(w, auth)
			return
		}
		writeJSON(w, e.computeNodes)
	default:
		http.NotFound(w, r)
	}
}

// nmxNode is one entry of NMX's compute-node list, in its field names.
func nmxNode(name, domain, chassis string) map[string]any {
	return map[string]any{"ID": "690a2d9cc5e905fa41a87d79", "Name": name, "DomainUUID": domain, "GpuIDList": []string{"690a2d9cc5e905fa41a87cdc"},
		"Health": "HEALTHY", "LocationInfo": map[string]any{"ChassisID": 1, "ChassisSerialNumber": chassis, "HostID": 1, "SlotID": 5, "TrayIndex": 4}}
}

func (e *emulator) login(w http.ResponseWriter, r *http.Request, body []byte) {
	if !e.noQuery(w, r) {
		return
	}
	var req loginRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		http.Error(w, `{"message":"bad login body"}`, http.StatusBadRequest)
		return
	}
	if req.Username != e.user || req.Password != e.pass {
		e.unauthorized(w, string(body))
		return
	}
	writeJSON(w, LoginResponse{AccessToken: loginToken, Premises: e.premises})
}

func (e *emulator) noQuery(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.RawQuery != "" {
		http.Error(w, `{"message":"unknown query parameters"}`, http.StatusBadRequest)
		return false
	}
	return true
}

func (e *emulator) bearer(w http.ResponseWriter, got, token string) bool {
	if got != "Bearer "+token {
		e.unauthorized(w, got)
		return false
	}
	return true
}

func (e *emulator) unauthorized(w http.ResponseWriter, sent string) {
	msg := `{"message":"unauthorized"}`
	if e.echo {
		msg = `{"message":"unauthorized","received":` + strconv.Quote(sent) + `}`
	}
	http.Error(w, msg, http.StatusUnauthorized)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (e *emulator) callCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.calls)
}

// start serves e over TLS and returns its URL and a CA file trusting it.
func (e *emulator) start(t *testing.T) (string, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(e)
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.URL, ca
}

// clos returns a NetQ graph: spines and leaves fully meshed, hosts
// spread over the leaves, in NetQ's tier groups. Device IDs are
// prefixed by pfx.
func clos(pfx string, spines, leaves int, hosts []string) Graph {
	dev := func(id, name string, tier int, typ string) GraphNode {
		return GraphNode{ID: pfx + id, Name: name, Tier: tier, DeviceType: typ, NodeType: "device"}
	}
	var sp, lf, hs []GraphNode
	var links []GraphLink
	link := func(a, b string) {
		links = append(links, GraphLink{ID: pfx + a + "-*-" + pfx + b, Src: pfx + a, Target: pfx + b, Size: 2})
	}
	for s := range spines {
		sp = append(sp, dev(fmt.Sprintf("s%d", s), fmt.Sprintf("spine%02d", s+1), 2, "switch"))
	}
	for l := range leaves {
		lf = append(lf, dev(fmt.Sprintf("l%d", l), fmt.Sprintf("leaf%02d", l+1), 1, "switch"))
		for s := range spines {
			link(fmt.Sprintf("s%d", s), fmt.Sprintf("l%d", l))
		}
	}
	for i, h := range hosts {
		hs = append(hs, dev(fmt.Sprintf("h%d", i), h, -1, "discovered_via_lldp"))
		// NetQ gives the link ID leaf first, without src/target.
		links = append(links, GraphLink{ID: fmt.Sprintf("%sl%d-*-%sh%d", pfx, i%leaves, pfx, i), Size: 1})
	}
	return Graph{
		Nodes: []GraphNode{
			{ID: "tier-2", NodeType: "tier", Tier: 2, CompoundedNodes: sp},
			{ID: "tier-1", NodeType: "tier", Tier: 1, CompoundedNodes: lf},
			{ID: "tier-unclassified", NodeType: "tier", Tier: -1, CompoundedNodes: hs},
		},
		Links: links,
	}
}
