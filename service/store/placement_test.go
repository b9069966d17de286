package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/toposcope/toposcope/placement"
)

// TestPlacementSurvivesRestart writes budgets and ledger records through
// placement.OpenBooks, reopens the store file, and reads them back.
func TestPlacementSurvivesRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "store.db")
	s := open(t, path)
	ps, err := placement.OpenBooks(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ps.View(context.Background(), "a"); err != nil || len(v.Records) != 0 || v.Tree.Leaves() != 1 {
		t.Fatalf("empty store: %v records, err %v", v.Records, err)
	}
	b := &placement.Budgets{Accounts: []placement.AccountSpec{{Name: "org", Children: []placement.AccountSpec{{Name: "a", Shares: placement.Shares(3)}, {Name: "b"}}}}}
	if err := ps.SetBudgets(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	recs := []placement.Record{
		{Account: "a", Workload: "w1", GPUs: 8, Nodes: []string{"gpu001"}, Start: start, MinRuntime: time.Hour, Allocated: true},
		{Account: "b", Workload: "w2", GPUs: 16, Start: start, End: start.Add(2 * time.Hour)},
	}
	if err := ps.Append(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	if err := ps.Append(t.Context(), []placement.Record{{Account: "a", Workload: "ok", GPUs: 1, Start: start}, {Account: "", GPUs: -1}}); err == nil {
		t.Fatal("an invalid record was accepted")
	}
	if err := ps.Append(t.Context(), recs[:1]); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path)
	defer func() { _ = s.Close() }()
	again, err := placement.OpenBooks(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	v, err := again.View(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tree, got := v.Tree, v.Records
	if len(got) != 3 || got[0].Workload != "w1" || got[1].Workload != "w2" || got[2].Workload != "w1" ||
		!got[1].End.Equal(start.Add(2*time.Hour)) || got[0].MinRuntime != time.Hour || !got[0].Allocated || got[0].Nodes[0] != "gpu001" {
		t.Fatalf("records after restart: %+v", got)
	}
	i, ok := tree.Lookup("a")
	if !ok || tree.Accounts()[i].Norm != 0.75 {
		t.Fatalf("budgets after restart: a found %v, accounts %+v", ok, tree.Accounts())
	}
}

// TestPlacementDeleteSurvivesRestart: deleted records stay deleted when
// the store is opened again; others stay.
func TestPlacementDeleteSurvivesRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "store.db")
	s := open(t, path)
	ps, err := placement.OpenBooks(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if err := ps.Append(t.Context(), []placement.Record{
		{Account: "a", Workload: "bad", GPUs: 8, Nodes: []string{"gone001"}, Start: start},
		{Account: "a", Workload: "keep", GPUs: 8, Start: start},
		{Account: "a", Workload: "bad", GPUs: 4, Start: start},
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := ps.Delete(t.Context(), "bad"); err != nil || n != 2 {
		t.Fatalf("Delete = %d, %v; want 2", n, err)
	}
	if _, err := ps.Delete(t.Context(), "bad"); !errors.Is(err, placement.ErrNoRecord) {
		t.Fatalf("second Delete = %v, want ErrNoRecord", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	defer func() { _ = s.Close() }()
	again, err := placement.OpenBooks(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	v, err := again.View(context.Background())
	if err != nil || len(v.Records) != 1 || v.Records[0].Workload != "keep" {
		t.Fatalf("records after restart: %+v, %v", v.Records, err)
	}
}
