package service

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
)

// TestLoopKeepsItsSlot: with every API request slot taken, the service's
// own discovery still runs.
func TestLoopKeepsItsSlot(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Store.Path = filepath.Join(t.TempDir(), "store.db")
	cfg.Provider.Name = "sim"
	cfg.Server.MaxConcurrentDiscoveries = 2
	svc, err := New(context.Background(), cfg, Deps{Registry: internalRegistry(t)})
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

// TestNewKeepsFilesBelowRoots: with a paths section, a configured model
// outside the read roots stops the service before anything opens it.
func TestNewKeepsFilesBelowRoots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Store.Path = filepath.Join(dir, "store.db")
	cfg.Provider.Name = "sim"
	config.SetParam(&cfg.Provider.Params, "model", "/etc/passwd")
	cfg.Paths.Read = []string{filepath.Join(dir, "models")}
	_, err := New(context.Background(), cfg, Deps{Registry: internalRegistry(t)})
	if !errors.Is(err, config.ErrOutsideRoots) || !strings.Contains(err.Error(), "provider.params.model") {
		t.Fatalf("New = %v, want ErrOutsideRoots on provider.params.model", err)
	}
}
