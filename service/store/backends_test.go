package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/dbtest"
)

// backend opens stores of one kind; open may be called again for a
// second replica on the same data (for bbolt: after the first closed).
type backend struct {
	name string
	open func(t *testing.T) *store.Store
}

// backends are bbolt and, on real servers started for the test,
// PostgreSQL and MariaDB.
func backends(t *testing.T) []backend {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toposcope.db")
	out := []backend{{"bbolt", func(t *testing.T) *store.Store { return open(t, path) }}}
	for _, k := range dbtest.Kinds {
		var srv *dbtest.Server
		out = append(out, backend{string(k), func(t *testing.T) *store.Store {
			if srv == nil {
				srv = dbtest.Start(t.Context(), t, k)
			}
			return openDB(t, srv)
		}})
	}
	return out
}

// openDB opens a store on the server's test database.
func openDB(t *testing.T, srv *dbtest.Server) *store.Store {
	t.Helper()
	s, err := store.OpenDatabase(t.Context(), store.Database{Driver: srv.Driver(), DSN: srv.DSN(), OpTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestBackendsAgree runs one history through each backend and compares
// every answer with bbolt's: snapshots and their paging, heads, graphs,
// diffs, accept, runs, results and their pruning, agents' reports and
// their pages, the budgets and the ledger.
func TestBackendsAgree(t *testing.T) {
	t.Parallel()
	var want []string
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			got := history(t, b.open(t))
			if want == nil {
				want = got
				return
			}
			if len(got) != len(want) {
				t.Fatalf("%d answers, bbolt gave %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("answer %d:\n got %s\nwant %s (bbolt)", i, got[i], want[i])
				}
			}
		})
	}
}

// history drives s through a fixed history and returns each answer as
// JSON; times are fixed, so two backends must answer alike.
func history(t *testing.T, s *store.Store) []string {
	t.Helper()
	ctx := t.Context()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var out []string
	say := func(what string, v any, err error) {
		data, jerr := json.Marshal(v)
		if jerr != nil {
			t.Fatal(jerr)
		}
		e := ""
		if err != nil {
			e = " error: " + err.Error()
		}
		out = append(out, what+" "+string(data)+e)
	}
	_, data := graph(t, "n1", "n2", "n3", "n4")
	g2, data2 := graph(t, "n1", "n2")
	for i := range 5 {
		snap := &store.Snapshot{CreatedAt: t0.Add(time.Duration(i) * time.Hour), Provider: "sim", Trigger: "interval", Status: store.StatusAccepted}
		run := &store.Run{StartedAt: t0, FinishedAt: t0, Outcome: store.OutcomePublished}
		d := data
		if i == 4 {
			snap.Status, snap.Reason, d = store.StatusRefused, "shrink", data2
		}
		err := s.AddSnapshot(ctx, snap, d, &store.Diff{From: uint64(i)}, run)
		say("add", []any{snap, run}, err)
	}
	cur, pend, err := s.Heads(ctx)
	say("heads", []uint64{cur, pend}, err)
	for _, before := range []uint64{0, 3, 1, 99} {
		list, err := s.Snapshots(ctx, 2, before)
		say(fmt.Sprint("snapshots before ", before), list, err)
	}
	g, err := s.Graph(ctx, 5)
	say("graph 5 nodes", len(g.Nodes()), err)
	say("graph 5 equal", reflect.DeepEqual(g.Nodes(), g2.Nodes()), nil)
	_, err = s.Graph(ctx, 42)
	say("graph 42 not found", errors.Is(err, store.ErrNotFound), nil)
	d, err := s.Diff(ctx, 3)
	say("diff 3", d, err)
	_, err = s.AcceptPending(ctx, 2, t0, store.ByOperator)
	say("accept 2 not pending", errors.Is(err, store.ErrNotPending), nil)
	snap, err := s.AcceptPending(ctx, 5, t0, store.ByOperator)
	say("accept 5", snap, err)
	cur, pend, err = s.Heads(ctx)
	say("heads after accept", []uint64{cur, pend}, err)
	say("run", nil, s.AddRun(ctx, &store.Run{StartedAt: t0, Outcome: store.OutcomeFailed, Error: "x"}, true))
	runs, err := s.Runs(ctx, 3)
	say("runs", runs, err)
	for i := range 4 {
		r := &store.Result{ID: fmt.Sprintf("req-%d", i), State: store.StateDone, Request: json.RawMessage(`{}`), SubmittedAt: t0, FinishedAt: t0.Add(time.Duration(i) * time.Minute), Size: 3}
		if i == 3 {
			r.State = store.StatePending
		}
		say("put result", nil, s.PutResult(ctx, r, []byte(fmt.Sprintf("b%d", i))))
	}
	res, body, err := s.Result(ctx, "req-1")
	say("result 1", []any{res, string(body)}, err)
	pending, err := s.PendingResults(ctx)
	say("pending", pending, err)
	p, err := s.Prune(ctx, t0.Add(time.Hour), config.Retention{Snapshots: 2, Results: 1, Runs: 3})
	say("prune", p, err)
	list, err := s.Snapshots(ctx, 10, 0)
	say("snapshots after prune", list, err)
	_, _, err = s.Result(ctx, "req-0")
	say("result 0 pruned", errors.Is(err, store.ErrNotFound), nil)
	for _, n := range []string{"c", "a", "d", "b"} {
		r := store.AgentReport{ReceivedAt: t0.Add(time.Duration(n[0]) * time.Minute)}
		r.Facts.Node = n
		say("put agent", nil, s.PutAgentReport(ctx, r))
	}
	for _, after := range []string{"", "a", "b", "bb", "d"} {
		page, next, err := s.AgentReportsPage(ctx, after, 2)
		say("agents after "+after, []any{page, next}, err)
	}
	say("delete agent", nil, s.DeleteAgentReport(ctx, "b"))
	say("delete agent again", errors.Is(s.DeleteAgentReport(ctx, "b"), store.ErrNotFound), nil)
	n, err := s.PruneAgentReports(ctx, t0.Add(time.Hour*3), store.AgentRetention{MaxReports: 1})
	say("prune agents", n, err)
	all, err := s.AgentReports(ctx)
	say("agents", all, err)
	books, err := placement.OpenBooks(ctx, s)
	say("books", nil, err)
	say("budgets", nil, books.SetBudgets(ctx, &placement.Budgets{Accounts: []placement.AccountSpec{{Name: "a", Shares: placement.Shares(2)}}}))
	recs := []placement.Record{{Account: "a", Workload: "w1", GPUs: 8, Start: t0}, {Account: "a", Workload: "w2", GPUs: 4, Start: t0}}
	say("append", nil, books.Append(ctx, recs))
	del, err := books.Delete(ctx, "w1")
	say("delete w1", del, err)
	b, ledger, err := s.LoadPlacement(ctx)
	say("load placement", []any{b, ledger}, err)
	return out
}

// TestBackendsReopen: what one replica wrote, a store opened later on
// the same data reads (bbolt after the first closes; a database while
// the first is still open, as a second replica).
func TestBackendsReopen(t *testing.T) {
	t.Parallel()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			first := b.open(t)
			_, data := graph(t, "n1", "n2")
			snap := &store.Snapshot{Status: store.StatusAccepted, Provider: "sim"}
			if err := first.AddSnapshot(t.Context(), snap, data, nil, nil); err != nil {
				t.Fatal(err)
			}
			if b.name == "bbolt" {
				if err := first.Close(); err != nil {
					t.Fatal(err)
				}
			}
			second := b.open(t)
			cur, _, err := second.Heads(t.Context())
			if err != nil || cur != snap.ID {
				t.Fatalf("second store: current %d, %v; want %d", cur, err, snap.ID)
			}
			if !strings.Contains(second.Path(), "toposcope") {
				t.Errorf("Path() = %q, want the file or database named", second.Path())
			}
		})
	}
}
