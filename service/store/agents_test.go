package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/service/store"
)

func TestAgentReports(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "store.db")
	s := open(t, path)
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

	if _, err := s.AgentReport(t.Context(), "gpu-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("AgentReport on an empty store = %v, want ErrNotFound", err)
	}
	if list, err := s.AgentReports(ctx); err != nil || len(list) != 0 {
		t.Fatalf("AgentReports on an empty store = %v, %v", list, err)
	}
	if err := s.PutAgentReport(t.Context(), store.AgentReport{}); err == nil {
		t.Fatal("PutAgentReport with no node name succeeded")
	}
	for i, n := range []string{"gpu-3", "gpu-1", "gpu-2"} {
		r := store.AgentReport{
			Facts:      providers.NodeFacts{Node: n, GPUs: 4, Clique: "c.1", HCAs: []providers.HCA{{Name: "mlx5_0", NodeGUID: "0c42a10300a1b2c3"}}},
			ReceivedAt: t0.Add(time.Duration(i) * time.Hour),
		}
		if err := s.PutAgentReport(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	// A newer report replaces the node's old one.
	if err := s.PutAgentReport(t.Context(), store.AgentReport{Facts: providers.NodeFacts{Node: "gpu-3", GPUs: 8}, ReceivedAt: t0.Add(3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.AgentReport(t.Context(), "gpu-3")
	if err != nil || got.Facts.GPUs != 8 || !got.ReceivedAt.Equal(t0.Add(3*time.Hour)) || got.Facts.Clique != "" {
		t.Fatalf("AgentReport(gpu-3) = %+v, %v; want the replacing report", got, err)
	}
	list, err := s.AgentReports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range list {
		names = append(names, r.Facts.Node)
	}
	if len(names) != 3 || names[0] != "gpu-1" || names[1] != "gpu-2" || names[2] != "gpu-3" {
		t.Fatalf("AgentReports nodes = %v, want gpu-1..3 in order", names)
	}
	if list[0].Facts.HCAs[0].NodeGUID != "0c42a10300a1b2c3" {
		t.Fatalf("HCA lost in the round trip: %+v", list[0].Facts)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.AgentReports(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("AgentReports(cancelled) = %v, want context.Canceled", err)
	}

	// Reports survive a reopen.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	defer func() { _ = s.Close() }()
	if _, err := s.AgentReport(t.Context(), "gpu-2"); err != nil {
		t.Fatalf("after reopen: %v", err)
	}

	// Received: gpu-1 at t0+1h, gpu-2 at t0+2h, gpu-3 (replaced) at t0+3h.
	now := t0.Add(4 * time.Hour)
	n, err := s.PruneAgentReports(t.Context(), now, store.AgentRetention{MaxAge: 150 * time.Minute, MaxReports: 10})
	if err != nil || n != 1 {
		t.Fatalf("prune by age deleted %d, %v; want 1 (gpu-1, 3h old)", n, err)
	}
	n, err = s.PruneAgentReports(t.Context(), now, store.AgentRetention{MaxReports: 1})
	if err != nil || n != 1 {
		t.Fatalf("prune by count deleted %d, %v; want 1", n, err)
	}
	list, _ = s.AgentReports(ctx)
	if len(list) != 1 || list[0].Facts.Node != "gpu-3" {
		t.Fatalf("after pruning: %+v, want only the newest (gpu-3)", list)
	}
}

func TestAgentRetentionValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    store.AgentRetention
		want string
	}{
		{store.DefaultAgentRetention(), ""},
		{store.AgentRetention{MaxAge: -time.Second, MaxReports: 1}, "maxAge"},
		{store.AgentRetention{MaxReports: 0}, "maxReports"},
	} {
		err := tc.r.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Validate(%+v) = %v, want an error naming %q", tc.r, err, tc.want)
		}
	}
}
