package service_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
)

// TestBudgetsEnginePublishesBudgets: an engine of the budgets tree
// (kueue-budgets, printing) is given the budgets in force; with none set
// it publishes nothing, and a change of budgets alone is published at the
// next run although the graph is unchanged.
func TestBudgetsEnginePublishesBudgets(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	defer f.store.Close()
	modelPath := filepath.Join(t.TempDir(), "m.yaml")
	model(t, modelPath, 32)
	prov := config.Plugin{Name: "sim"}
	config.SetParam(&prov.Params, "model", modelPath)
	eng := config.Plugin{Name: "kueue-budgets"}
	config.SetParam(&eng.Params, "mode", "print")
	var budgets atomic.Pointer[placement.Budgets]
	var out bytes.Buffer
	l, err := service.NewLoop(service.LoopDeps{
		Registry: app.Registry(), Store: f.store, Metrics: f.metrics, Limiter: f.limiter, Stdout: &out,
		Provider: prov, Engines: []config.Plugin{eng}, Config: config.DefaultDiscovery(), Retention: config.DefaultStore().Retention,
		Budgets: budgets.Load,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Load(); err != nil {
		t.Fatal(err)
	}
	tree := func(nlp float64) *placement.Budgets {
		return &placement.Budgets{Accounts: []placement.AccountSpec{
			{Name: "nlp", Shares: placement.Shares(nlp)}, {Name: "vision", Shares: placement.Shares(1)},
		}}
	}
	steps := []struct {
		name    string
		trigger string
		set     *placement.Budgets
		engines int
		printed string // in what the engine printed, "" for nothing
	}{
		{"no budgets: nothing published", service.TriggerStartup, nil, 1, ""},
		{"still none: graph unchanged, no publish", service.TriggerInterval, nil, 0, ""},
		{"budgets set: published", service.TriggerInterval, tree(3), 1, "weight: \"3\""},
		{"same budgets: no publish", service.TriggerInterval, tree(3), 0, ""},
		{"a share changes: published", service.TriggerInterval, tree(5), 1, "weight: \"5\""},
	}
	for _, s := range steps { // sequential: each run builds on the last
		budgets.Store(s.set)
		out.Reset()
		run, err := l.RunOnce(context.Background(), s.trigger)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if len(run.Engines) != s.engines || (run.Outcome != store.OutcomePublished && run.Outcome != store.OutcomeUnchanged) {
			t.Errorf("%s: outcome %s, engines %+v; want %d engines", s.name, run.Outcome, run.Engines, s.engines)
		}
		for _, r := range run.Engines {
			if r.Error != "" {
				t.Errorf("%s: engine error %s", s.name, r.Error)
			}
		}
		if got := out.String(); (s.printed == "") != (got == "") || !strings.Contains(got, s.printed) {
			t.Errorf("%s: printed %q, want it to contain %q", s.name, got, s.printed)
		}
	}
}
