package placement

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
)

func TestParseBudgetsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown-key", "accounts:\n  - name: a\n    share: 3\n", "accounts[0].share (line 3): unknown key"},
		{"duplicate", "accounts:\n  - name: a\n  - name: a\n", "accounts[1].name (line 3): duplicate account"},
		{"negative", "accounts:\n  - name: a\n    shares: -1\n", "accounts[0].shares (line 3): must not be negative"},
		{"nested-empty", "accounts:\n  - name: a\n    children:\n      - shares: 2\n", "accounts[0].children[0].name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseBudgets([]byte(tc.yaml))
			if !errors.Is(err, ErrInvalid) || !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseLedger(t *testing.T) {
	t.Parallel()
	l, err := ParseLedger([]byte(`records:
  - account: a
    workload: w1
    gpus: 8
    nodes: [gpu001]
    start: 2026-12-02T10:00:00Z
    minRuntime: 30m
    allocated: true
`))
	if err != nil {
		t.Fatal(err)
	}
	if r := l.Records[0]; r.MinRuntime != 30*time.Minute || !r.Start.Equal(t0.Add(-2*time.Hour)) || !r.Allocated {
		t.Fatalf("record = %+v", r)
	}
	_, err = ParseLedger([]byte("records:\n  - account: a\n    gpus: 0\n    start: 2026-12-02T10:00:00Z\n"))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "records[0].gpus (line 3)") {
		t.Fatalf("err = %v", err)
	}
}

// TestComputeModes checks window usage, rho, owed/delivered and the
// projected standing on a two-account cluster of 10 GPUs.
func TestComputeModes(t *testing.T) {
	t.Parallel()
	recs := []Record{
		// a: 4 GPUs for the last 10 h, allocated; demand from 12 h ago.
		{Account: "a", GPUs: 4, Start: t0.Add(-10 * time.Hour), Submit: t0.Add(-12 * time.Hour), Allocated: true, MinRuntime: time.Hour},
		// b: 6 GPUs unallocated for 10 h: free, not charged.
		{Account: "b", GPUs: 6, Start: t0.Add(-10 * time.Hour)},
		// outside the window.
		{Account: "b", GPUs: 6, Start: t0.Add(-20 * 24 * time.Hour), End: t0.Add(-19 * 24 * time.Hour), Allocated: true},
	}
	tr := EqualTree([]string{"a", "b"})
	for _, tc := range []struct {
		mode    Mode
		aBefore bool // a served before b
	}{{ModeFairTree, false}, {ModeClassic, false}, {ModeWindow, false}} {
		t.Run(string(tc.mode), func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.Mode = tc.mode
			cfg.Window = 10 * time.Hour
			st, err := Compute(tr, recs, t0, 10, cfg)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := st.Of("a")
			b, _ := st.Of("b")
			if a.UsageRaw != 4*10*3600 || b.UsageRaw != 0 {
				t.Fatalf("usage a %v b %v", a.UsageRaw, b.UsageRaw)
			}
			// entitled: 0.5 × 10 GPU × 10 h; used 40 GPU-h → rho 0.8.
			if math.Abs(a.Rho-0.8) > 1e-12 {
				t.Errorf("rho(a) = %v, want 0.8", a.Rho)
			}
			if (a.Key > b.Key) != tc.aBefore {
				t.Errorf("key a %v b %v", a.Key, b.Key)
			}
			// owed = min(5, demand 4) per hour for 10 h; delivered 40.
			if math.Abs(a.OwedGPUHours-40) > 1e-9 || math.Abs(a.DeliveredGPUHours-40) > 1e-9 {
				t.Errorf("owed %v delivered %v", a.OwedGPUHours, a.DeliveredGPUHours)
			}
			// b's only work in the window is unallocated: free, owed to
			// nobody and not delivered (both count allocated work only).
			if b.OwedGPUHours != 0 || b.DeliveredGPUHours != 0 {
				t.Errorf("b owed %v delivered %v", b.OwedGPUHours, b.DeliveredGPUHours)
			}
			after, err := st.With("b", 10, time.Hour, nil)
			if err != nil {
				t.Fatal(err)
			}
			if after.UsageRaw != 10*3600 {
				t.Errorf("after usage %v", after.UsageRaw)
			}
			if _, err := st.Of("zz"); !errors.Is(err, ErrUnknownAccount) {
				t.Errorf("Of(zz) err = %v", err)
			}
		})
	}
}

func TestSpreadPartialHours(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		from, to  float64 // hours after the window start
		wantTotal float64
	}{
		{"inside-one-hour", 0.25, 0.75, 0.5},
		{"across", 0.5, 3.25, 2.75},
		{"open-end", 1.5, 4, 2.5},
		{"whole", 0, 4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			part, diff := make([]float64, 4), make([]float64, 5)
			spread(part, diff, tc.from, tc.to, 1)
			var sum, rate float64
			for h := range part {
				rate += diff[h]
				sum += part[h] + rate
			}
			if math.Abs(sum-tc.wantTotal) > 1e-9 {
				t.Errorf("total %v, want %v", sum, tc.wantTotal)
			}
		})
	}
}

// TestComputeOwn: standings from each account's own usage equal those
// Compute gives from the records behind that usage, in fairtree and
// window modes; classic mode, which needs decayed usage, is refused.
func TestComputeOwn(t *testing.T) {
	t.Parallel()
	b, err := ParseBudgets([]byte("accounts:\n- name: a\n  shares: 2\n- name: b\n- name: c\n  children: [{name: c1}, {name: c2, shares: 3}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := NewTree(b)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	recs := []Record{
		{Account: "a", GPUs: 8, Start: now.Add(-5 * time.Hour), End: now.Add(-time.Hour), Allocated: true},
		{Account: "c1", GPUs: 16, Start: now.Add(-2 * time.Hour), Allocated: true},
		{Account: "c2", GPUs: 4, Start: now.Add(-8 * 24 * time.Hour), End: now.Add(-6 * 24 * time.Hour), Allocated: true},
	}
	own := make([]float64, len(tree.Accounts()))
	own[1] = 8 * 4 * 3600 // a
	i, _ := tree.Lookup("c1")
	own[i] = 16 * 2 * 3600
	i, _ = tree.Lookup("c2")
	own[i] = 4 * 24 * 3600 // the day inside the 7-day window
	for _, mode := range []Mode{ModeFairTree, ModeWindow} {
		cfg := DefaultConfig()
		cfg.Mode = mode
		want, err := Compute(tree, recs, now, 64, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ComputeOwn(tree, own, now, 64, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for k := range want.Accounts {
			w, g := want.Accounts[k], got.Accounts[k]
			if math.Abs(w.Key-g.Key) > 1e-9 || w.Rank != g.Rank || math.Abs(w.UsageRaw-g.UsageRaw) > 1e-6 {
				t.Errorf("%s %s: key %v rank %d usage %v; Compute gives %v, %d, %v", mode, w.Account, g.Key, g.Rank, g.UsageRaw, w.Key, w.Rank, w.UsageRaw)
			}
		}
	}
	cfg := DefaultConfig()
	cfg.Mode = ModeClassic
	if _, err := ComputeOwn(tree, own, now, 64, cfg); !errors.Is(err, ErrInvalid) {
		t.Errorf("classic: err = %v, want ErrInvalid", err)
	}
	if _, err := ComputeOwn(tree, own[:2], now, 64, DefaultConfig()); !errors.Is(err, ErrInvalid) {
		t.Errorf("short usage: err = %v, want ErrInvalid", err)
	}
}
