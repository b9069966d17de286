package service_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
)

func model(t *testing.T, path string, nodes int) {
	t.Helper()
	data, err := sim.Generate(sim.GenerateOptions{Nodes: nodes, DomainSize: 18})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// simPlugin is the sim provider on a model of nodes nodes, written to a
// temporary file.
func simPlugin(t *testing.T, nodes int) config.Plugin {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.yaml")
	model(t, path, nodes)
	prov := config.Plugin{Name: "sim"}
	config.SetParam(&prov.Params, "model", path)
	return prov
}

func newLoop(t *testing.T, f *fixture, modelPath, output string, cfg config.Discovery) *service.Loop {
	t.Helper()
	prov := config.Plugin{Name: "sim"}
	config.SetParam(&prov.Params, "model", modelPath)
	eng := config.Plugin{Name: "slurm"}
	config.SetParam(&eng.Params, "output", output)
	l, err := service.NewLoop(service.LoopDeps{
		Registry: app.Registry(), Store: f.store, Metrics: f.metrics, Limiter: f.limiter,
		Provider: prov, Engines: []config.Plugin{eng}, Config: cfg, Retention: config.DefaultStore().Retention,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	return l
}

// runLoop runs l in a goroutine; the returned function stops it and
// waits for it to return.
func runLoop(l *service.Loop) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

func TestLoopPublishesOnlyOnChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := newFixture(t, "")
	defer f.store.Close()
	modelPath, out := filepath.Join(dir, "m.yaml"), filepath.Join(dir, "topology.conf")
	model(t, modelPath, 64)
	l := newLoop(t, f, modelPath, out, config.DefaultDiscovery())
	tests := []struct {
		name    string
		before  func()
		outcome store.Outcome
		engines int
	}{
		{"first", func() {}, store.OutcomePublished, 1},
		{"same again", func() {}, store.OutcomeUnchanged, 0},
		{"grown", func() { model(t, modelPath, 70) }, store.OutcomePublished, 1},
		{"source gone", func() { _ = os.Remove(modelPath) }, store.OutcomeFailed, 0},
		{"back", func() { model(t, modelPath, 70) }, store.OutcomeUnchanged, 0},
	}
	for _, tt := range tests { // sequential: each step builds on the last
		tt.before()
		run, err := l.RunOnce(context.Background(), service.TriggerAPI)
		if run == nil || run.Outcome != tt.outcome || len(run.Engines) != tt.engines {
			t.Fatalf("%s: run = %+v, err %v", tt.name, run, err)
		}
		if tt.outcome == store.OutcomeFailed && (err == nil || !strings.Contains(run.Error, "discover with sim")) {
			t.Errorf("%s: error = %v / %q", tt.name, err, run.Error)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(data), "gpu[065-070]") {
		t.Errorf("published file = %q, %v", data, err)
	}
	if st := l.State(); st.Snapshot.ID != 2 || st.LastRun.Outcome != store.OutcomeUnchanged {
		t.Errorf("state = %+v", st)
	}
	// A new loop on the same store starts from the stored topology and
	// republishes it once.
	l2 := newLoop(t, f, modelPath, out, config.DefaultDiscovery())
	if st := l2.State(); st.Graph == nil || len(st.Graph.Nodes()) != 70 {
		t.Fatalf("loaded state = %+v", st)
	}
	if run, err := l2.RunOnce(context.Background(), service.TriggerStartup); err != nil || len(run.Engines) != 1 {
		t.Errorf("first run of a new loop = %+v, %v", run, err)
	}
}

func TestLoopWatchesFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := newFixture(t, "")
	defer f.store.Close()
	modelPath := filepath.Join(dir, "m.yaml")
	model(t, modelPath, 40)
	cfg := config.DefaultDiscovery()
	cfg.Interval = 0
	cfg.Triggers.WatchFiles = []string{modelPath}
	cfg.Triggers.WatchInterval = 100 * time.Millisecond
	l := newLoop(t, f, modelPath, filepath.Join(dir, "out.conf"), cfg)
	stop := runLoop(l)
	waitSnapshot := func(id uint64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for st := l.State(); st.Snapshot == nil || st.Snapshot.ID != id; st = l.State() {
			if time.Now().After(deadline) {
				t.Fatalf("snapshot %d never came: %+v", id, st)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitSnapshot(1) // the startup trigger
	model(t, modelPath, 41)
	waitSnapshot(2) // the file trigger
	if !l.Trigger(service.TriggerAPI) {
		t.Error("API trigger refused")
	}
	stop()
}

// TestLoopDebouncesTriggers: a burst of API triggers within the debounce
// is one discovery.
func TestLoopDebouncesTriggers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := newFixture(t, "")
	defer f.store.Close()
	modelPath := filepath.Join(dir, "m.yaml")
	model(t, modelPath, 16)
	cfg := config.DefaultDiscovery()
	cfg.Interval, cfg.Triggers.Startup, cfg.Triggers.Debounce = 0, false, 2*time.Second
	l := newLoop(t, f, modelPath, filepath.Join(dir, "out.conf"), cfg)
	stop := runLoop(l)
	for range 10 { // a rack going down, one trigger a node
		l.Trigger(service.TriggerAPI)
		time.Sleep(10 * time.Millisecond)
	}
	deadline := time.Now().Add(30 * time.Second)
	for st := l.State(); st.LastRun == nil; st = l.State() {
		if time.Now().After(deadline) {
			t.Fatal("no discovery after the burst")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(cfg.Triggers.Debounce + 200*time.Millisecond) // room for a second, wrong, run
	stop()
	runs, err := f.store.Runs(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Trigger != service.TriggerAPI {
		t.Errorf("runs after a burst of 10 triggers: %+v, want one", runs)
	}
}
