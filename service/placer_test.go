package service_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/service"
)

// TestPlacer: before a discovery the placer has no topology; after one,
// the ledger occupies the cluster, a record that no longer fits is named
// and left out instead of failing the answer, and Place ranks candidates
// on what is left, reporting the occupancy it used.
func TestPlacer(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Store.Path = filepath.Join(t.TempDir(), "store.db")
	cfg.Provider = app.DefaultProvider()
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	svc, err := service.New(context.Background(), cfg, service.Deps{Registry: app.Registry(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })

	if _, err := svc.Placer.Occupied(t.Context()); !errors.Is(err, service.ErrNoTopology) {
		t.Fatalf("Occupied before any discovery = %v, want ErrNoTopology", err)
	}
	if _, err := svc.Loop.RunOnce(context.Background(), service.TriggerAPI); err != nil {
		t.Fatal(err)
	}
	node := svc.Loop.State().Graph.Nodes()[0].Name
	start := now.Add(-time.Hour)
	recs := []placement.Record{
		{Account: "a", Workload: "fits", GPUs: 1, Nodes: []string{node}, Start: start, Allocated: true},
		{Account: "a", Workload: "gone", GPUs: 1, Nodes: []string{"no-such-node"}, Start: start, Allocated: true},
	}
	if err := svc.Placement.Append(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	o, err := svc.Placer.Occupied(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Ignored, []string{"gone"}) || o.OccupyErr == nil {
		t.Fatalf("ignored %v (%v), want [gone] with the reason", o.Ignored, o.OccupyErr)
	}
	if free, all := o.Cluster.FreeGPUs(), o.Cluster.GPUs(); free != all-1 {
		t.Fatalf("free GPUs %d of %d, want one taken by the record that fits", free, all)
	}
	if !o.At.Equal(now) || o.State.Graph != svc.Loop.State().Graph {
		t.Fatalf("occupancy at %v on another graph, want the injected clock and the current graph", o.At)
	}
	res, po, err := svc.Placer.Place(t.Context(), placement.Request{Account: "b", GPUs: 1, Duration: time.Hour}, placement.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Candidates) == 0 || !slices.Equal(po.Ignored, []string{"gone"}) {
		t.Fatalf("Place: %d candidates, ignored %v; want candidates and the same ignored record", len(res.Candidates), po.Ignored)
	}
}
