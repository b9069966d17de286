package service_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/kueuebudgets"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// printingBudgetsLoop is a loop on a 32-node sim model whose one engine
// is kueue-budgets printing to out, given the budgets stored in budgets.
func printingBudgetsLoop(t *testing.T) (*service.Loop, *atomic.Pointer[placement.Budgets], *bytes.Buffer) {
	t.Helper()
	f := newFixture(t, "")
	t.Cleanup(func() { _ = f.store.Close() })
	eng := config.Plugin{Name: "kueue-budgets"}
	config.SetParam(&eng.Params, "mode", "print")
	budgets, out := &atomic.Pointer[placement.Budgets]{}, &bytes.Buffer{}
	l, err := service.NewLoop(service.LoopDeps{
		Registry: app.Registry(), Store: f.store, Metrics: f.metrics, Limiter: f.limiter, Stdout: out,
		Provider: simPlugin(t, 32), Engines: []config.Plugin{eng}, Config: config.DefaultDiscovery(), Retention: config.DefaultStore().Retention,
		Budgets: budgets.Load,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	return l, budgets, out
}

// nlpVision is a two-account budgets tree, nlp's shares given.
func nlpVision(nlp float64) *placement.Budgets {
	return &placement.Budgets{Accounts: []placement.AccountSpec{
		{Name: "nlp", Shares: placement.Shares(nlp)}, {Name: "vision", Shares: placement.Shares(1)},
	}}
}

// TestBudgetsEnginePublishesBudgets: an engine of the budgets tree
// (kueue-budgets, printing) is given the budgets in force; with none set
// it publishes nothing, and a change of budgets alone is published at the
// next run although the graph is unchanged.
func TestBudgetsEnginePublishesBudgets(t *testing.T) {
	t.Parallel()
	l, budgets, out := printingBudgetsLoop(t)
	steps := []struct {
		name    string
		trigger string
		set     *placement.Budgets
		engines int
		printed string // in what the engine printed, "" for nothing
	}{
		{"no budgets: nothing published", service.TriggerStartup, nil, 1, ""},
		{"still none: graph unchanged, no publish", service.TriggerInterval, nil, 0, ""},
		{"budgets set: published", service.TriggerInterval, nlpVision(3), 1, "weight: \"3\""},
		{"same budgets: no publish", service.TriggerInterval, nlpVision(3), 0, ""},
		{"a share changes: published", service.TriggerInterval, nlpVision(5), 1, "weight: \"5\""},
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

// TestPublishBudgetsCountsAsPublished: after Loop.PublishBudgets has
// published a new tree on the current graph, the next discovery of the
// unchanged graph publishes no engine, as after a discovery run that
// published the same budgets.
func TestPublishBudgetsCountsAsPublished(t *testing.T) {
	t.Parallel()
	l, budgets, out := printingBudgetsLoop(t)
	budgets.Store(nlpVision(3))
	if run, err := l.RunOnce(context.Background(), service.TriggerStartup); err != nil || len(run.Engines) != 1 {
		t.Fatalf("startup: err %v, engines %+v; want 1 engine", err, run)
	}
	budgets.Store(nlpVision(5))
	out.Reset()
	res := l.PublishBudgets(context.Background(), false)
	if len(res) != 1 || res[0].Error != "" || !strings.Contains(out.String(), "weight: \"5\"") {
		t.Fatalf("PublishBudgets: results %+v, printed %q; want one success printing weight 5", res, out.String())
	}
	out.Reset()
	run, err := l.RunOnce(context.Background(), service.TriggerInterval)
	if err != nil {
		t.Fatal(err)
	}
	if run.Outcome != store.OutcomeUnchanged || len(run.Engines) != 0 || out.Len() != 0 {
		t.Errorf("interval after PublishBudgets: outcome %s, engines %+v, printed %q; want unchanged, no publish", run.Outcome, run.Engines, out.String())
	}
}

// TestPublishBudgetsShrinkGuard: on a real apiserver with Kueue's CRDs,
// Loop.PublishBudgets applies the budgets tree through kueue-budgets with
// the loop's shrink guard: a tree that would delete most of the objects
// is refused and nothing is deleted; accepted, it is applied.
func TestPublishBudgetsShrinkGuard(t *testing.T) {
	t.Parallel()
	b, err := kubetest.FindKueue()
	switch {
	case err != nil && kubetest.InCI():
		t.Fatalf("CI=true and no Kueue CRDs: %v", err)
	case err != nil:
		t.Skipf("no Kueue CRDs: %v", err)
	}
	c := env.Require(t)
	ctx := t.Context()
	crd := func(name string) string { return filepath.Join(b.ConfigDir, "crd", "kueue.x-k8s.io_"+name+".yaml") }
	if err := c.InstallCRDs(ctx, crd("cohorts"), crd("clusterqueues"), crd("resourceflavors")); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubetest.WriteKubeconfig(kubeconfig, c.AdminConfig()); err != nil {
		t.Fatal(err)
	}
	p := c.Prefix(t)
	f := newFixture(t, "")
	defer f.store.Close()
	prov := simPlugin(t, 32)
	eng := config.Plugin{Name: "kueue-budgets"}
	config.SetParam(&eng.Params, "kubeconfig", kubeconfig)
	config.SetParam(&eng.Params, "root", p+"-root")
	var budgets atomic.Pointer[placement.Budgets]
	l, err := service.NewLoop(service.LoopDeps{
		Registry: app.Registry(), Store: f.store, Metrics: f.metrics, Limiter: f.limiter,
		Provider: prov, Engines: []config.Plugin{eng}, Config: config.DefaultDiscovery(), Retention: config.DefaultStore().Retention,
		KubeGuard: kube.NewShrinkGuard(0.5), Budgets: budgets.Load,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := l.RunOnce(ctx, service.TriggerStartup); err != nil {
		t.Fatal(err)
	}
	names := []string{p + "-a", p + "-b", p + "-c", p + "-d"}
	tree := func(n int) *placement.Budgets {
		out := &placement.Budgets{}
		for _, name := range names[:n] {
			out.Accounts = append(out.Accounts, placement.AccountSpec{Name: name, Shares: placement.Shares(1)})
		}
		return out
	}
	queues := func() int {
		list, err := c.Dynamic().Resource(kueuebudgets.ClusterQueueResource).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}
	steps := []struct {
		name    string
		tree    *placement.Budgets
		accept  bool
		refused bool
		queues  int
	}{
		{"four accounts", tree(4), false, false, 4},
		{"one left: 3 of 5 objects deleted, refused", tree(1), false, true, 4},
		{"accepted", tree(1), true, false, 1},
	}
	for _, s := range steps {
		budgets.Store(s.tree)
		res := l.PublishBudgets(ctx, s.accept)
		if len(res) != 1 || (res[0].Error != "") != s.refused || (s.refused && !strings.Contains(res[0].Error, "publish refused")) {
			t.Fatalf("%s: results %+v, refused want %v", s.name, res, s.refused)
		}
		if got := queues(); got != s.queues {
			t.Errorf("%s: %d ClusterQueues, want %d", s.name, got, s.queues)
		}
	}
}
