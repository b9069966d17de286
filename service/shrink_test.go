package service_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
)

// TestShrinkGuardWindow: a fabric stepped down 512 → 470 → 432 → 400 →
// 370 nodes loses under 10% each time, but the guard compares with the
// largest topology of its window, so the step that takes the loss past
// 10% is refused; with no window every step is accepted.
func TestShrinkGuardWindow(t *testing.T) {
	t.Parallel()
	steps := []int{512, 470, 432, 400, 370}
	for _, tt := range []struct {
		name    string
		window  bool
		refused int // index of the first refused step; -1 for none
	}{{"window", true, 2}, {"no window", false, -1}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			f := newFixture(t, "")
			defer f.store.Close()
			modelPath := filepath.Join(dir, "m.yaml")
			cfg := config.DefaultDiscovery()
			if !tt.window {
				cfg.ShrinkWindow = 0
			}
			model(t, modelPath, steps[0])
			l := newLoop(t, f, modelPath, filepath.Join(dir, "topology.conf"), cfg)
			first := -1
			for i, n := range steps {
				model(t, modelPath, n)
				run, err := l.RunOnce(context.Background(), service.TriggerAPI)
				if err != nil && run == nil {
					t.Fatal(err)
				}
				if run.Outcome == store.OutcomeRefused {
					first = i
					if !strings.Contains(run.Error, "from 512") || !strings.Contains(run.Error, "shrinkWindow") {
						t.Errorf("refusal %q does not name the baseline of 512 nodes and the window", run.Error)
					}
					st := l.State()
					if st.Pending == nil || !strings.Contains(service.AcceptRequest(st.Pending.ID), "/accept") {
						t.Errorf("no pending snapshot to accept: %+v", st.Pending)
					}
					break
				}
			}
			if first != tt.refused {
				t.Errorf("first refused step = %d, want %d", first, tt.refused)
			}
		})
	}
}

// TestAllEnginesFailedIsNotPublished: a run whose every engine failed is
// publish-failed, with the engines' errors.
func TestAllEnginesFailedIsNotPublished(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := newFixture(t, "")
	defer f.store.Close()
	modelPath := filepath.Join(dir, "m.yaml")
	model(t, modelPath, 32)
	l := newLoop(t, f, modelPath, filepath.Join(dir, "missing", "dir", "topology.conf"), config.DefaultDiscovery())
	run, _ := l.RunOnce(context.Background(), service.TriggerAPI)
	if run == nil || run.Outcome != store.OutcomePublishFailed || !strings.Contains(run.Error, "every engine failed: slurm") {
		t.Fatalf("run = %+v, want publish-failed naming the slurm engine", run)
	}
}
