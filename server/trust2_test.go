package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/server"
)

// TestBodiesAreStrictJSON: keys are matched exactly (case included) and
// a key repeated in one object is refused, in every body.
func TestBodiesAreStrictJSON(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	s.discover()
	rec := `{"account":"b","workload":"w1","gpus":8,"nodes":["gpu001"],"start":"2000-01-01T00:00:00Z"}`
	for _, tc := range []struct {
		name, method, target, body, field string
	}{
		{"agent keys upper-case", http.MethodPut, "/v1/agents/gpu001", `{"NODE":"gpu001","GPUS":8}`, "NODE"},
		{"agent key twice", http.MethodPut, "/v1/agents/gpu001", `{"node":"gpu001","node":"gpu002"}`, "node"},
		{"ledger key capitalised", http.MethodPost, "/v1/ledger", `{"Records":[` + rec + `]}`, "Records"},
		{"ledger record key capitalised", http.MethodPost, "/v1/ledger", `{"records":[{"Account":"b","workload":"w1","gpus":8,"start":"2000-01-01T00:00:00Z"}]}`, "records[0].Account"},
		{"ledger record key twice", http.MethodPost, "/v1/ledger", `{"records":[{"account":"b","account":"a","workload":"w1","gpus":8,"start":"2000-01-01T00:00:00Z"}]}`, "records[0].account"},
		{"ledger duration key twice", http.MethodPost, "/v1/ledger", `{"records":[{"account":"b","workload":"w1","gpus":8,"start":"2000-01-01T00:00:00Z","minRuntime":"1h","minRuntime":"2h"}]}`, "records[0].minRuntime"},
		{"records twice", http.MethodPost, "/v1/ledger", `{"records":[],"records":[` + rec + `]}`, "records"},
		{"budgets nested key capitalised", http.MethodPut, "/v1/budgets", `{"accounts":[{"Name":"a"}]}`, "accounts[0].Name"},
		{"budgets key twice", http.MethodPut, "/v1/budgets", `{"accounts":[],"accounts":[{"name":"a"}]}`, "accounts"},
		{"placement key capitalised", http.MethodPost, "/v1/placements", `{"Account":"a","gpus":8}`, "Account"},
		{"placement key twice", http.MethodPost, "/v1/placements", `{"account":"a","gpus":8,"gpus":800000}`, "gpus"},
		{"generate key twice", http.MethodPost, "/v1/generate", `{"engine":{"name":"slurm","name":"k8s"}}`, "engine.name"},
	} {
		w := s.do(tc.method, tc.target, tc.body)
		if w.Code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", tc.name, w.Code, w.Body)
			continue
		}
		if e := errorOf(t, w); e.Field != tc.field {
			t.Errorf("%s: field %q (%s), want %q", tc.name, e.Field, e.Message, tc.field)
		}
	}
	if w := s.do(http.MethodGet, "/v1/ledger", ""); strings.Contains(w.Body.String(), "w1") {
		t.Errorf("a refused body changed the ledger: %s", w.Body)
	}
	w := s.do(http.MethodPut, "/v1/agents/gpu001", `{"NODE":"gpu001"}`)
	if e := errorOf(t, w); !strings.Contains(e.Message, `did you mean "node"`) {
		t.Errorf("mis-cased key message = %q, want a hint", e.Message)
	}
}

// TestNoSniffEverywhere: every answer, errors and API bodies included,
// says X-Content-Type-Options: nosniff.
func TestNoSniffEverywhere(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	s.discover()
	for _, tc := range [][2]string{
		{http.MethodGet, "/healthz"}, {http.MethodGet, "/readyz"}, {http.MethodGet, "/v1/graph"}, {http.MethodGet, "/v1/agents"},
		{http.MethodGet, "/v1/nodes/nope"}, {http.MethodGet, "/no/such/route"}, {http.MethodPatch, "/v1/graph"},
		{http.MethodGet, "/metrics"}, {http.MethodGet, "/openapi.json"}, {http.MethodGet, "/"},
	} {
		w := s.do(tc[0], tc[1], "")
		if got := w.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (%d): X-Content-Type-Options = %q", tc[0], tc[1], w.Code, got)
		}
	}
}

// TestWritesRefuseForeignHosts: without tokens (on loopback), a write
// whose Host is not one of the service's names is refused, whatever its
// Origin and Sec-Fetch-Site say: a page on a rebound DNS name reaches the
// listener as its own origin.
func TestWritesRefuseForeignHosts(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{allowedHosts: []string{"toposcope.lab.example"}})
	s.discover()
	budgets := `{"accounts":[{"name":"a"}]}`
	for _, tc := range []struct {
		host   string
		status int
	}{
		{"rebind.attacker.example:49021", http.StatusForbidden},
		{"rebind.attacker.example", http.StatusForbidden},
		{"127.0.0.1.attacker.example:49021", http.StatusForbidden},
		{"10.1.2.3:49021", http.StatusForbidden},
		{"127.0.0.1:49021", http.StatusOK},
		{"[::1]:49021", http.StatusOK},
		{"localhost:49021", http.StatusOK},
		{"LOCALHOST.:49021", http.StatusOK},
		{"toposcope.lab.example:49021", http.StatusOK},
	} {
		origin := "http://" + tc.host
		for _, target := range [][2]string{{http.MethodPut, "/v1/budgets"}, {http.MethodPost, "/v1/ledger"}} {
			body := budgets
			if target[1] == "/v1/ledger" {
				body = `{"records":[]}`
			}
			w := s.do(target[0], target[1], body, "Host", tc.host, "Origin", origin, "Sec-Fetch-Site", "same-origin")
			if w.Code != tc.status {
				t.Errorf("Host %s: %s %s = %d %s, want %d", tc.host, target[0], target[1], w.Code, w.Body, tc.status)
			}
		}
	}
	if w := s.do(http.MethodGet, "/v1/budgets", "", "Host", "rebind.attacker.example:49021"); w.Code != http.StatusOK {
		t.Errorf("a read with a foreign Host = %d, want 200 (reads need no token here)", w.Code)
	}
}

// TestIgnoredRecordsAreCounted: records that a topology change orphaned
// are counted in the header, not listed there, and listed on their own
// route.
func TestIgnoredRecordsAreCounted(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{guard: 1})
	s.discover()
	var recs, names []string
	for i := range 3 {
		name := fmt.Sprintf("w%d-%s", i, strings.Repeat("x", 1000))
		names = append(names, name)
		recs = append(recs, fmt.Sprintf(`{"account":"b","workload":%q,"gpus":8,"nodes":["gpu%03d"],"start":"2000-01-01T00:00:00Z"}`, name, 98+i))
	}
	if w := s.do(http.MethodPost, "/v1/ledger", `{"records":[`+strings.Join(recs, ",")+`]}`); w.Code != http.StatusOK {
		t.Fatalf("ledger = %d %s", w.Code, w.Body)
	}
	writeModel(t, s.modelPath, 96) // gpu097-gpu100 leave
	s.discover()
	for _, target := range []string{"/v1/capacity", "/v1/tree", "/v1/heatmap", "/v1/fairshare"} {
		w := s.do(http.MethodGet, target, "")
		if got := w.Header().Get("X-Toposcope-Ignored-Records"); w.Code != http.StatusOK || got != "3" {
			t.Errorf("%s = %d, ignored header %.80q, want 3", target, w.Code, got)
		}
	}
	w := s.do(http.MethodGet, "/v1/ledger/ignored?limit=2", "")
	var got server.IgnoredRecords
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK || got.Count != 3 ||
		len(got.Workloads) != 2 || got.Workloads[0] != names[0] {
		t.Errorf("ignored = %d %.200s (%v)", w.Code, w.Body, err)
	}
	if logs := s.logs.String(); strings.Contains(logs, names[2]) {
		t.Errorf("the log lists every ignored workload in full")
	}
}
