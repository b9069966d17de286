package service

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/registry"
)

// TestLoopKeepsItsSlot: with every API request slot taken, the service's
// own discovery still runs.
func TestLoopKeepsItsSlot(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Store.Path = filepath.Join(t.TempDir(), "store.db")
	cfg.Provider.Name = "sim"
	cfg.Server.MaxConcurrentDiscoveries = 2
	svc, err := New(context.Background(), cfg, Deps{Registry: registry.Default()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := svc.Close(); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range cfg.Server.MaxConcurrentDiscoveries {
		if err := svc.Requests.deps.Limiter.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	run, err := svc.Loop.RunOnce(ctx, TriggerAPI)
	if err != nil || run.Outcome == "" {
		t.Fatalf("the loop's discovery with every request slot taken: %+v, %v", run, err)
	}
}
