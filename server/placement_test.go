package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/placement"
)

func TestPlacementEndpoints(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	if w := s.do("POST", "/v1/placements", `{"account":"a","gpus":8}`); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("before discovery: %d %s", w.Code, w.Body)
	}
	s.discover()
	steps := []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		{"budgets", "PUT", "/v1/budgets", `{"accounts":[{"name":"a","shares":3},{"name":"b"}]}`, 200, `"shares":1`},
		{"bad budgets", "PUT", "/v1/budgets", `{"accounts":[{"name":"a"},{"name":"a"}]}`, 400, "duplicate"},
		{"unknown budgets field", "PUT", "/v1/budgets", `{"zzz":1}`, 400, `"field":"zzz"`},
		{"budgets field of the wrong type", "PUT", "/v1/budgets", `{"accounts":[{"name":"a","shares":"lots"}]}`, 400, `"field":"accounts.shares"`},
		{"budgets after refusals", "GET", "/v1/budgets", "", 200, `"shares":3`},
		{"get budgets", "GET", "/v1/budgets", "", 200, `"name":"a"`},
		{"ledger", "POST", "/v1/ledger", `{"records":[{"account":"b","workload":"w1","gpus":8,"nodes":["gpu001"],"start":"2000-01-01T00:00:00Z"}]}`, 200, `"appended":1`},
		{"bad ledger", "POST", "/v1/ledger", `{"records":[{"account":"b","gpus":0,"start":"2000-01-01T00:00:00Z"}]}`, 400, "gpus"},
		{"get ledger", "GET", "/v1/ledger", "", 200, `"workload":"w1"`},
		{"place", "POST", "/v1/placements", `{"account":"a","gpus":16,"minRuntime":3600000000000}`, 200, `"rankKey"`},
		{"place with duration strings", "POST", "/v1/placements", `{"account":"a","gpus":16,"minRuntime":"1h","duration":"2h30m"}`, 200, `"duration":9000000000000`},
		{"place with a bad duration", "POST", "/v1/placements", `{"account":"a","gpus":16,"duration":"soon"}`, 400, `"field":"duration"`},
		{"ledger with a duration string", "POST", "/v1/ledger", `{"records":[{"account":"b","workload":"w9","gpus":8,"nodes":["gpu009"],"start":"2000-01-01T00:00:00Z","end":"2000-01-01T05:00:00Z","minRuntime":"4h"}]}`, 200, `"appended":1`},
		{"ledger with a bad duration", "POST", "/v1/ledger", `{"records":[{"account":"b","workload":"w10","gpus":8,"start":"2000-01-01T00:00:00Z"},{"account":"b","workload":"w11","gpus":8,"start":"2000-01-01T00:00:00Z","minRuntime":"4 hours"}]}`, 400, `"field":"records[1].minRuntime"`},
		{"ledger field of the wrong type", "POST", "/v1/ledger", `{"records":[{"account":"b","workload":"w12","gpus":"eight","start":"2000-01-01T00:00:00Z"}]}`, 400, `"field":"records[0].gpus"`},
		{"ledger record with an unknown field", "POST", "/v1/ledger", `{"records":[{"account":"b","workload":"w13","gpus":8,"start":"2000-01-01T00:00:00Z","colour":"red"}]}`, 400, `"field":"records[0].colour"`},
		{"the duration string kept as nanoseconds", "GET", "/v1/ledger", "", 200, `"workload":"w9","gpus":8,"nodes":["gpu009"],"start":"2000-01-01T00:00:00Z","end":"2000-01-01T05:00:00Z","minRuntime":14400000000000`},
		{"unknown account", "POST", "/v1/placements", `{"account":"zz","gpus":8}`, 404, "unknown_account"},
		{"invalid request", "POST", "/v1/placements", `{"account":"a"}`, 400, "invalid_request"},
		{"unknown placement field", "POST", "/v1/placements", `{"account":"a","gpu":8}`, 400, `"field":"gpu"`},
		{"overflowing shape", "POST", "/v1/placements", `{"account":"a","nodes":4611686018427387904,"gpusPerNode":4}`, 400, "beyond any cluster"},
		{"unknown ledger field", "POST", "/v1/ledger", `{"records":[],"extra":1}`, 400, `"field":"extra"`},
		{"unknown node", "POST", "/v1/ledger", `{"records":[{"account":"b","workload":"w2","gpus":8,"nodes":["gpu001","nope9"],"start":"2000-01-01T00:00:00Z"}]}`, 400, `"field":"records[0].nodes[1]"`},
		{"GPUs beyond the nodes'", "POST", "/v1/ledger", `{"records":[{"account":"b","workload":"w3","gpus":99,"nodes":["gpu002"],"start":"2000-01-01T00:00:00Z"}]}`, 400, `"field":"records[0].gpus"`},
		{"overlap with running work", "POST", "/v1/ledger", `{"records":[{"account":"b","workload":"w4","gpus":8,"nodes":["gpu001"],"start":"2000-01-01T00:00:00Z"}]}`, 400, "overlap"},
		{"hostlist expanded", "POST", "/v1/ledger", `{"records":[{"account":"b","workload":"w5","gpus":16,"nodes":["gpu[003-004]"],"start":"2000-01-01T00:00:00Z","end":"2000-01-02T00:00:00Z"}]}`, 200, `"appended":1`},
		{"ledger after refusals", "GET", "/v1/ledger", "", 200, `"gpu004"`},
		{"delete a workload's records", "DELETE", "/v1/ledger/w5", "", 200, `"deleted":1`},
		{"delete it again", "DELETE", "/v1/ledger/w5", "", 404, "not_found"},
		{"no candidate", "POST", "/v1/placements", `{"account":"a","gpus":100000}`, 422, "no_candidate"},
		{"fairshare", "GET", "/v1/fairshare", "", 200, `"fairShare"`},
		{"fairshare classic", "GET", "/v1/fairshare?mode=classic", "", 200, `"mode":"classic"`},
		{"fairshare bad mode", "GET", "/v1/fairshare?mode=nope", "", 400, "mode"},
		{"capacity", "GET", "/v1/capacity", "", 200, `"largestFreePerLevel"`},
		{"heatmap shows the record", "GET", "/v1/heatmap", "", 200, `{"id":"leaf0001","name":"leaf0001","nodes":32,"occupancy":{"gpus":256,"free":248,"allocated":0,"unallocated":8,"reclaimable":8,"workloads":1}}`},
		{"tree shows the record on its node", "GET", "/v1/tree?switch=leaf0001", "", 200, `{"name":"gpu001","gpus":8,"domain":"nvl0001","occupancy":{"gpus":8,"free":0,"allocated":0,"unallocated":8,"reclaimable":8,"workloads":1}}`},
	}
	for _, st := range steps { // sequential: later steps depend on earlier ones
		w := s.do(st.method, st.path, st.body, "Content-Type", "application/json")
		if w.Code != st.code || !strings.Contains(w.Body.String(), st.want) {
			t.Errorf("%s: %d %s; want %d containing %q", st.name, w.Code, w.Body, st.code, st.want)
		}
	}
	w := s.do("GET", "/v1/capacity", "")
	var rep placement.CapacityReport
	if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.GPUs-rep.Free != 8 {
		t.Errorf("capacity: %d GPUs, %d free; want 8 held", rep.GPUs, rep.Free)
	}
}

// TestPlacementWithoutBudgets: with no budgets set, an account the ledger
// has not seen yet gets an equal share, as `toposcope place` gives it,
// instead of "unknown account".
func TestPlacementWithoutBudgets(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	s.discover()
	w := s.do("POST", "/v1/placements", `{"account":"newteam","gpus":8}`, "Content-Type", "application/json")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"account":"newteam"`) {
		t.Fatalf("placement for a new account without budgets = %d %s", w.Code, w.Body)
	}
	if w := s.do("POST", "/v1/placements", `{"gpus":8}`, "Content-Type", "application/json"); w.Code != http.StatusBadRequest {
		t.Errorf("a placement without an account = %d %s; want 400", w.Code, w.Body)
	}
	s.do("PUT", "/v1/budgets", `{"accounts":[{"name":"a"}]}`, "Content-Type", "application/json")
	if w := s.do("POST", "/v1/placements", `{"account":"newteam","gpus":8}`, "Content-Type", "application/json"); w.Code != http.StatusNotFound {
		t.Errorf("with budgets, an account not in them = %d %s; want 404", w.Code, w.Body)
	}
}

// TestZeroSharesOverREST: PUT /v1/budgets keeps an explicit 0 shares and
// reads absent shares as 1.
func TestZeroSharesOverREST(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	w := s.do("PUT", "/v1/budgets", `{"accounts":[{"name":"a","shares":0},{"name":"b"}]}`, "Content-Type", "application/json")
	if w.Code != http.StatusOK {
		t.Fatalf("PUT = %d %s", w.Code, w.Body)
	}
	got := s.do("GET", "/v1/budgets", "").Body.String()
	if !strings.Contains(got, `{"name":"a","shares":0}`) || !strings.Contains(got, `{"name":"b","shares":1}`) {
		t.Errorf("budgets = %s", got)
	}
}

// TestPutBudgetsPublishes: PUT /v1/budgets stores the tree and has the
// engines of the budgets tree publish it at once; what an engine cannot
// publish leaves the budgets stored and comes back as a Warning header.
func TestPutBudgetsPublishes(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{engines: "- name: kueue-budgets\n  params: {mode: print}\n"})
	s.discover()
	w := s.do("PUT", "/v1/budgets", `{"accounts":[{"name":"a","shares":3},{"name":"b"}]}`)
	if w.Code != http.StatusOK || w.Header().Get("Warning") != "" {
		t.Fatalf("PUT budgets: %d, Warning %q: %s", w.Code, w.Header().Get("Warning"), w.Body)
	}
	w = s.do("PUT", "/v1/budgets", `{"accounts":[{"name":"a","children":[{"name":"c","useParent":true}]}]}`)
	if warn := w.Header().Get("Warning"); w.Code != http.StatusOK || !strings.HasPrefix(warn, `299 toposcope "kueue-budgets: `) || !strings.Contains(warn, "useParent has no Kueue equivalent") {
		t.Fatalf("PUT budgets Kueue cannot express: %d, Warning %q", w.Code, warn)
	}
	if w := s.do("GET", "/v1/budgets", ""); !strings.Contains(w.Body.String(), `"useParent":true`) {
		t.Errorf("the budgets were not stored: %s", w.Body)
	}
}
