package store_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/topology"
)

func graph(t *testing.T, nodes ...string) (*topology.Graph, []byte) {
	t.Helper()
	b := topology.NewBuilder()
	for i, n := range nodes {
		b.AddNode(topology.Node{Name: n, GPUs: 8})
		leaf := "leaf1"
		if i%2 == 1 {
			leaf = "leaf2"
		}
		b.AddPath(n, []topology.SwitchInfo{{ID: leaf}, {ID: "spine"}})
		b.AddToDomain(n, "nvl1", "")
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	return g, data
}

func open(t *testing.T, path string) *store.Store {
	t.Helper()
	s, err := store.Open(path, store.Options{LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSnapshotsSurviveReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "db")
	s := open(t, path)
	g1, j1 := graph(t, "n1", "n2", "n3")
	g2, j2 := graph(t, "n1", "n2")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := &store.Snapshot{CreatedAt: now, Status: store.StatusAccepted, Counts: store.CountsOf(g1)}
	if err := s.AddSnapshot(t.Context(), a, j1, nil, &store.Run{Outcome: store.OutcomePublished}); err != nil {
		t.Fatal(err)
	}
	d := store.Compare(g1, g2)
	r := &store.Snapshot{CreatedAt: now, Status: store.StatusRefused, Parent: a.ID, Changes: d.Summary()}
	if err := s.AddSnapshot(t.Context(), r, j2, d, nil); err != nil {
		t.Fatal(err)
	}
	if cur, pend, _ := s.Heads(t.Context()); cur != 1 || pend != 2 {
		t.Fatalf("heads = %d, %d", cur, pend)
	}
	if _, err := s.AcceptPending(t.Context(), 1, now, store.ByOperator); !errors.Is(err, store.ErrNotPending) {
		t.Errorf("accepting a non-pending snapshot: %v", err)
	}
	if _, err := s.AcceptPending(t.Context(), 9, now, store.ByOperator); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("accepting an unknown snapshot: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path)
	defer s.Close()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	snap, err := s.AcceptPending(t.Context(), 2, now, store.ByOperator)
	if err != nil || snap.Status != store.StatusAccepted || snap.AcceptedBy != store.ByOperator {
		t.Fatalf("accept = %+v, %v", snap, err)
	}
	if cur, pend, _ := s.Heads(t.Context()); cur != 2 || pend != 0 {
		t.Errorf("heads after accept = %d, %d", cur, pend)
	}
	back, err := s.Graph(t.Context(), 1)
	if err != nil || len(back.Nodes()) != 3 {
		t.Fatalf("graph 1 = %v, %v", back, err)
	}
	diff, err := s.Diff(t.Context(), 2)
	if err != nil || len(diff.NodesRemoved) != 1 || diff.NodesRemoved[0] != "n3" || diff.To != 2 {
		t.Errorf("diff = %+v, %v", diff, err)
	}
	list, _ := s.Snapshots(t.Context(), 10, 0)
	if len(list) != 2 || list[0].ID != 2 {
		t.Errorf("list = %+v", list)
	}
	if older, _ := s.Snapshots(t.Context(), 10, 2); len(older) != 1 || older[0].ID != 1 {
		t.Errorf("before 2 = %+v", older)
	}
	if runs, _ := s.Runs(t.Context(), 5); len(runs) != 1 || runs[0].Snapshot != 1 {
		t.Errorf("runs = %+v", runs)
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	a, _ := graph(t, "n1", "n2", "n3")
	b2 := topology.NewBuilder()
	for _, n := range []string{"n1", "n2", "n4"} {
		b2.AddNode(topology.Node{Name: n, GPUs: 8})
	}
	b2.AddPath("n1", []topology.SwitchInfo{{ID: "leaf2"}, {ID: "spine"}})
	b2.AddPath("n2", []topology.SwitchInfo{{ID: "leaf2"}, {ID: "spine"}})
	b2.AddPath("n4", []topology.SwitchInfo{{ID: "leaf3"}, {ID: "spine"}})
	b2.AddToDomain("n1", "nvl1", "")
	b, err := b2.Build()
	if err != nil {
		t.Fatal(err)
	}
	d := store.Compare(a, b)
	if len(d.NodesAdded) != 1 || len(d.NodesRemoved) != 1 || len(d.NodesMoved) != 2 ||
		len(d.SwitchesAdded) != 1 || len(d.SwitchesRemoved) != 1 || len(d.DomainsChanged) != 1 {
		t.Errorf("diff = %+v", d)
	}
	if !store.Compare(a, a).Empty() {
		t.Error("a graph differs from itself")
	}
	if d := store.Compare(nil, a); len(d.NodesAdded) != 3 {
		t.Errorf("from nothing = %+v", d)
	}
}

func TestResultsAndPrune(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "db"))
	defer s.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"a", "b", "c", "d"} {
		r := &store.Result{ID: id, State: store.StateDone, SubmittedAt: now, FinishedAt: now.Add(time.Duration(i) * time.Hour), ContentType: "text/plain"}
		if err := s.PutResult(t.Context(), r, []byte("body-"+id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutResult(t.Context(), &store.Result{ID: "p", State: store.StatePending, Request: json.RawMessage(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	if r, body, err := s.Result(t.Context(), "b"); err != nil || r.ContentType != "text/plain" || string(body) != "body-b" {
		t.Errorf("result b = %+v %q %v", r, body, err)
	}
	if _, _, err := s.Result(t.Context(), "zz"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown result: %v", err)
	}
	for i := range 5 {
		g, j := graph(t, "n1")
		st := &store.Snapshot{CreatedAt: now.Add(time.Duration(i) * time.Hour), Status: store.StatusAccepted, Counts: store.CountsOf(g)}
		if err := s.AddSnapshot(t.Context(), st, j, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.AddRun(t.Context(), &store.Run{Outcome: store.OutcomeUnchanged}, false); err != nil {
			t.Fatal(err)
		}
	}
	ret := config.Retention{Snapshots: 2, Results: 2, ResultAge: 150 * time.Minute, Runs: 3}
	p, err := s.Prune(t.Context(), now.Add(4*time.Hour), ret)
	if err != nil {
		t.Fatal(err)
	}
	// Results: a (4h old) and b (3h) are too old; c and d are kept, as is
	// the pending p. Snapshots: the 3 oldest go, the current (5) stays.
	if p != (store.Pruned{Snapshots: 3, Results: 2, Runs: 2}) {
		t.Errorf("pruned = %+v", p)
	}
	if pend, _ := s.PendingResults(t.Context()); len(pend) != 1 || pend[0].ID != "p" {
		t.Errorf("pending = %+v", pend)
	}
	if _, err := s.Graph(t.Context(), 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("graph of a pruned snapshot: %v", err)
	}
	if cur, _, _ := s.Heads(t.Context()); cur != 5 {
		t.Errorf("current = %d", cur)
	}
}

func TestOpenLockedTimesOut(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "db")
	s := open(t, path)
	defer s.Close()
	if _, err := store.Open(path, store.Options{LockTimeout: 50 * time.Millisecond}); err == nil {
		t.Error("a second open of a locked store succeeded")
	}
}

// TestPruneResultBytes: finished results beyond the byte budget go,
// oldest first; pending ones stay.
func TestPruneResultBytes(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "db"))
	defer s.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	big := make([]byte, 1000)
	for i, id := range []string{"a", "b", "c", "d"} {
		r := &store.Result{ID: id, State: store.StateDone, SubmittedAt: now, FinishedAt: now.Add(time.Duration(i) * time.Minute), Size: len(big)}
		if err := s.PutResult(t.Context(), r, big); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.Prune(t.Context(), now, config.Retention{Snapshots: 10, Results: 100, ResultBytes: 2500, Runs: 10})
	if err != nil {
		t.Fatal(err)
	}
	if p.Results != 2 {
		t.Errorf("pruned %d results, want the 2 oldest", p.Results)
	}
	for id, kept := range map[string]bool{"a": false, "b": false, "c": true, "d": true} {
		if _, _, err := s.Result(t.Context(), id); (err == nil) != kept {
			t.Errorf("result %s: %v, kept want %v", id, err, kept)
		}
	}
}
