package service_test

import (
	"context"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/topology"
)

// oneEngineDeps are the loop's dependencies for discovering a 32-node
// sim model and publishing through eng alone (engine "test").
func oneEngineDeps(t *testing.T, f *fixture, eng engines.Engine) service.LoopDeps {
	t.Helper()
	reg, err := plugins.New(plugins.Lists{
		Providers: app.Providers(),
		Engines: []engines.Factory{{Name: "test", Summary: "test", New: func(*yaml.Node, string, engines.Deps) (engines.Engine, error) {
			return eng, nil
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return service.LoopDeps{
		Registry: reg, Store: f.store, Metrics: f.metrics, Limiter: f.limiter,
		Provider: simPlugin(t, 32), Engines: []config.Plugin{{Name: "test"}}, Config: config.DefaultDiscovery(),
		Retention: config.DefaultStore().Retention,
	}
}

// guardedEngine records how the loop published through it.
type guardedEngine struct {
	mu      sync.Mutex
	plain   int
	guarded []kube.ApplyOptions
}

func (e *guardedEngine) Publish(context.Context, *topology.Graph) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.plain++
	return nil
}

func (e *guardedEngine) PublishWith(_ context.Context, _ *topology.Graph, opts kube.ApplyOptions) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.guarded = append(e.guarded, opts)
	return nil
}

// TestLoopHandsGuardToKubernetesEngines: an engine with the
// kube.GuardedPublisher ability is published through PublishWith with the
// loop's shrink guard as an explicit option; without a guard the loop
// uses the plain Publish.
func TestLoopHandsGuardToKubernetesEngines(t *testing.T) {
	t.Parallel()
	for _, withGuard := range []bool{true, false} {
		f := newFixture(t, "")
		eng := &guardedEngine{}
		deps := oneEngineDeps(t, f, eng)
		if withGuard {
			deps.KubeGuard = kube.NewShrinkGuard(0.1)
		}
		l, err := service.NewLoop(deps)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.RunOnce(context.Background(), service.TriggerAPI); err != nil {
			t.Fatal(err)
		}
		if withGuard && (eng.plain != 0 || len(eng.guarded) != 1 || eng.guarded[0].Guard == nil) {
			t.Errorf("with a guard: %d plain publishes, guarded %+v; want one guarded publish", eng.plain, eng.guarded)
		}
		if !withGuard && (eng.plain != 1 || len(eng.guarded) != 0) {
			t.Errorf("without a guard: %d plain publishes, %d guarded; want one plain", eng.plain, len(eng.guarded))
		}
		if err := f.store.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
