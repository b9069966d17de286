package service_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/topology"
)

// TestNodeTriggerRepublishes: a run started by the node watcher publishes
// an unchanged graph again (a joined node needs its labels); others not.
func TestNodeTriggerRepublishes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := newFixture(t, "")
	defer f.store.Close()
	modelPath, out := filepath.Join(dir, "m.yaml"), filepath.Join(dir, "topology.conf")
	model(t, modelPath, 32)
	l := newLoop(t, f, modelPath, out, config.DefaultDiscovery())
	tests := []struct {
		trigger string
		outcome store.Outcome
		engines int
	}{
		{service.TriggerStartup, store.OutcomePublished, 1},
		{service.TriggerInterval, store.OutcomeUnchanged, 0},
		{service.TriggerNodes, store.OutcomeUnchanged, 1},
	}
	for _, tt := range tests { // sequential: each run builds on the last
		run, err := l.RunOnce(context.Background(), tt.trigger)
		if err != nil {
			t.Fatalf("%s: %v", tt.trigger, err)
		}
		if run.Outcome != tt.outcome || len(run.Engines) != tt.engines {
			t.Errorf("%s: outcome %s, %d engines; want %s, %d", tt.trigger, run.Outcome, len(run.Engines), tt.outcome, tt.engines)
		}
	}
}

// TestAdopt: a follower adopts the leader's graph as an accepted snapshot
// without publishing, once per distinct graph.
func TestAdopt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	leaderStore, followerStore := newFixture(t, ""), newFixture(t, "")
	defer leaderStore.store.Close()
	defer followerStore.store.Close()
	modelPath := filepath.Join(dir, "m.yaml")
	model(t, modelPath, 32)
	leader := newLoop(t, leaderStore, modelPath, filepath.Join(dir, "leader.conf"), config.DefaultDiscovery())
	if _, err := leader.RunOnce(context.Background(), service.TriggerStartup); err != nil {
		t.Fatal(err)
	}
	follower := newLoop(t, followerStore, modelPath, filepath.Join(dir, "follower.conf"), config.DefaultDiscovery())
	g := leader.State().Graph
	for i, want := range []bool{true, false} {
		changed, err := follower.Adopt(t.Context(), g)
		if err != nil || changed != want {
			t.Fatalf("adopt %d: changed=%v err=%v, want %v", i, changed, err, want)
		}
	}
	st := follower.State()
	if st.Snapshot == nil || st.Snapshot.AcceptedBy != service.ByLeader || st.Snapshot.Digest != leader.State().Snapshot.Digest {
		t.Fatalf("follower snapshot = %+v", st.Snapshot)
	}
	if st.LastRun != nil {
		t.Errorf("adopting recorded a run: %+v", st.LastRun)
	}
	// Taking over, its first discovery finds the same graph and still
	// publishes (the first run of a process always does).
	run, err := follower.RunOnce(context.Background(), service.TriggerStartup)
	if err != nil || run.Outcome != store.OutcomeUnchanged || len(run.Engines) != 1 {
		t.Fatalf("first run after adopting: %+v, %v", run, err)
	}
}

// settlingEngine settles at its settleAt-th publish (engines.Settler).
type settlingEngine struct {
	mu                  sync.Mutex
	publishes, settleAt int
}

func (e *settlingEngine) Publish(context.Context, *topology.Graph) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.publishes++
	return nil
}

func (e *settlingEngine) Settled() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.publishes >= e.settleAt
}

// TestUnsettledEngineRepublishes: while an engine reports work left for a
// later publish (the kueue engine waiting for Workloads to finish), each
// discovery publishes the unchanged graph again and the run says so; once
// it has settled, an unchanged graph is not published again.
func TestUnsettledEngineRepublishes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	defer f.store.Close()
	l, err := service.NewLoop(oneEngineDeps(t, f, &settlingEngine{settleAt: 3}))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		trigger   string
		outcome   store.Outcome
		engines   int
		unsettled bool
	}{
		{service.TriggerStartup, store.OutcomePublished, 1, true},
		{service.TriggerInterval, store.OutcomeUnchanged, 1, true},
		{service.TriggerInterval, store.OutcomeUnchanged, 1, false}, // the third publish settles
		{service.TriggerInterval, store.OutcomeUnchanged, 0, false},
	}
	for i, tt := range tests { // sequential: each run builds on the last
		run, err := l.RunOnce(context.Background(), tt.trigger)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if run.Outcome != tt.outcome || len(run.Engines) != tt.engines {
			t.Fatalf("run %d: outcome %s, %d engines; want %s, %d", i, run.Outcome, len(run.Engines), tt.outcome, tt.engines)
		}
		if tt.engines > 0 && run.Engines[0].Unsettled != tt.unsettled {
			t.Errorf("run %d: unsettled = %v, want %v", i, run.Engines[0].Unsettled, tt.unsettled)
		}
	}
}
