package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/service/extender"
	"github.com/toposcope/toposcope/testenv/dbtest"
)

// TestReplicasShareTheStore: two replicas on one database (PostgreSQL,
// MariaDB), requests spread over both as a Service spreads them: the
// budgets one replica stored, the ledger record the other took, an agent
// report, a refused discovery and an operator's accept of it on the
// other replica are each seen by both; and the eight pods of a gang,
// their filter calls alternating between the replicas, are held on one
// node set.
func TestReplicasShareTheStore(t *testing.T) {
	t.Parallel()
	for _, k := range dbtest.Kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			db := dbtest.Start(t.Context(), t, k)
			a := newStack(t, stackOpts{database: db, extender: true, quiet: true})
			b := newStack(t, stackOpts{database: db, extender: true, quiet: true})
			replicas := []*stack{a, b}
			refresh := func() {
				t.Helper()
				for _, s := range replicas {
					if _, err := s.svc.Refresh(t.Context()); err != nil {
						t.Fatal(err)
					}
				}
			}
			first := a.discover()
			refresh()
			if st := b.loop.State(); st.Snapshot == nil || st.Snapshot.ID != first.Snapshot {
				t.Fatalf("replica b holds snapshot %v, want the leader's %d", st.Snapshot, first.Snapshot)
			}
			expect := func(s *stack, method, target, body string, code int) string {
				t.Helper()
				w := s.do(method, target, body)
				if w.Code != code {
					t.Fatalf("%s %s: %d %s, want %d", method, target, w.Code, w.Body, code)
				}
				return w.Body.String()
			}
			expect(a, http.MethodPut, "/v1/budgets", `{"accounts":[{"name":"team-a","shares":3},{"name":"team-b","shares":1}]}`, http.StatusOK)
			if got := expect(b, http.MethodGet, "/v1/budgets", "", http.StatusOK); !strings.Contains(got, "team-b") {
				t.Errorf("replica b's budgets: %s, want those put on a", got)
			}
			expect(b, http.MethodPost, "/v1/ledger", `{"records":[{"account":"team-a","workload":"job-1","gpus":8,"start":"2026-12-01T00:00:00Z"}]}`, http.StatusOK)
			if got := expect(a, http.MethodGet, "/v1/ledger", "", http.StatusOK); !strings.Contains(got, "job-1") {
				t.Errorf("replica a's ledger: %s, want the record posted on b", got)
			}
			node := a.loop.State().Graph.Nodes()[0].Name
			expect(a, http.MethodPut, "/v1/agents/"+node, `{"node":"`+node+`","gpus":8}`, http.StatusOK)
			if got := expect(b, http.MethodGet, "/v1/agents/"+node, "", http.StatusOK); !strings.Contains(got, `"gpus":8`) {
				t.Errorf("replica b's agent report of %s: %s", node, got)
			}

			writeModel(t, a.modelPath, 50) // half the cluster vanishes: the shrink guard refuses it
			refused := a.discover()
			refresh()
			pending := b.loop.State().Pending
			if pending == nil || pending.ID != refused.Snapshot {
				t.Fatalf("replica b's pending snapshot: %v, want %d (refused on a)", pending, refused.Snapshot)
			}
			expect(b, http.MethodPost, fmt.Sprintf("/v1/snapshots/%d/accept", pending.ID), "", http.StatusOK)
			refresh()
			if st := a.loop.State(); st.Pending != nil || st.Snapshot.ID != pending.ID {
				t.Errorf("replica a after the accept on b: current %d, pending %v; want %d and none", st.Snapshot.ID, st.Pending, pending.ID)
			}

			names := allNodes(a)
			filter := func(s *stack, pod, gang string) []string {
				t.Helper()
				nodes := slices.Clone(names)
				w := s.do("POST", "/v1/extender/filter", mustJSON(t, extender.Args{Pod: extPod(pod, gang, 8, 8, nil), NodeNames: &nodes}))
				if w.Code != http.StatusOK {
					t.Fatalf("filter of pod %s: %d %s", pod, w.Code, w.Body)
				}
				var res extender.FilterResult
				if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
					t.Fatal(err)
				}
				if res.NodeNames == nil || len(*res.NodeNames) != 8 {
					t.Fatalf("pod %s kept %v, want its gang's 8 nodes", pod, res.NodeNames)
				}
				return slices.Sorted(slices.Values(*res.NodeNames))
			}
			// Gang h's first pod reaches replica a alone: b must see its hold.
			other := filter(a, "h-0", "h")
			var held []string
			for i := range 8 {
				got := filter(replicas[i%2], fmt.Sprintf("g-%d", i), "g")
				if held == nil {
					held = got
				} else if !slices.Equal(got, held) {
					t.Fatalf("pod %d (replica %d) kept %v; the gang is held on %v", i, i%2, got, held)
				}
			}
			for _, n := range held {
				if slices.Contains(other, n) {
					t.Fatalf("gang g is held on %v, which overlaps gang h's %v", held, other)
				}
			}
		})
	}
}

// TestDatabaseOutage: while the database is down (killed), a replica
// answers 503 with Retry-After naming the store, without the password,
// and serves and discovers again once it is back, with nothing
// acknowledged lost.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	for _, k := range dbtest.Kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			db := dbtest.Start(t.Context(), t, k)
			s := newStack(t, stackOpts{database: db, quiet: true})
			s.discover()
			ledger := `{"records":[{"account":"team-a","workload":"job-%d","gpus":8,"start":"2026-12-01T00:00:00Z"}]}`
			if w := s.do(http.MethodPost, "/v1/ledger", fmt.Sprintf(ledger, 1)); w.Code != http.StatusOK {
				t.Fatalf("ledger: %d %s", w.Code, w.Body)
			}
			db.Kill()
			for _, req := range [][3]string{{http.MethodPost, "/v1/ledger", fmt.Sprintf(ledger, 2)}, {http.MethodGet, "/v1/snapshots", ""}, {http.MethodGet, "/v1/ledger", ""}} {
				w := s.do(req[0], req[1], req[2])
				if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "store_unavailable") ||
					!strings.Contains(w.Body.String(), "toposcope@127.0.0.1") || strings.Contains(w.Body.String(), dbtest.Password) {
					t.Errorf("%s %s with the database down: %d %s, want 503 store_unavailable naming the database, with Retry-After", req[0], req[1], w.Code, w.Body)
				}
			}
			if err := db.Restart(t.Context()); err != nil {
				t.Fatal(err)
			}
			var w *httptest.ResponseRecorder
			for range 50 { // the pool drops its dead connections as it meets them
				if w = s.do(http.MethodPost, "/v1/ledger", fmt.Sprintf(ledger, 3)); w.Code == http.StatusOK {
					break
				}
			}
			if w.Code != http.StatusOK {
				t.Fatalf("ledger after the restart: %d %s", w.Code, w.Body)
			}
			if got := s.do(http.MethodGet, "/v1/ledger", "").Body.String(); !strings.Contains(got, "job-1") || !strings.Contains(got, "job-3") {
				t.Errorf("ledger after the restart: %s, want job-1 and job-3", got)
			}
			if run := s.discover(); run.ID == 0 {
				t.Errorf("discovery after the restart recorded no run: %+v", run)
			}
		})
	}
}
