package kube_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/topology"
)

func TestShrinkGuard(t *testing.T) {
	t.Parallel()
	plan := func(changed, unchanged int, refused ...string) *kube.Result {
		return &kube.Result{Engine: "k8s-labels", Changed: changed, Unchanged: unchanged, Refused: refused}
	}
	tests := []struct {
		name    string
		limit   float64
		first   *kube.Result
		next    *kube.Result
		refused bool
	}{
		{"first plan sets the baseline", 0.1, nil, plan(0, 1, "a", "b", "c"), false},
		{"same refusals", 0.1, plan(0, 10, "cpu1"), plan(0, 10, "cpu1"), false},
		{"one of ten lost is within 10%", 0.1, plan(0, 10), plan(0, 9, "n1"), false},
		{"two of ten lost", 0.1, plan(0, 10), plan(0, 8, "n1", "n2"), true},
		{"new unknown nodes are not losses", 0.1, plan(0, 10), plan(0, 10, "new1", "new2", "new3"), false},
		{"guard off", 1, plan(0, 10), plan(0, 0, "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := kube.NewShrinkGuard(tc.limit)
			ctx := context.Background()
			if tc.first != nil {
				if err := g.Check(ctx, nil, tc.first); err != nil {
					t.Fatal(err)
				}
			}
			err := kube.CheckGuard(ctx, nil, tc.next, kube.ApplyOptions{Guard: g.Check})
			if got := errors.Is(err, kube.ErrRefused); got != tc.refused {
				t.Fatalf("refused = %v (%v), want %v", got, err, tc.refused)
			}
		})
	}
	// An operator's accept lets the loss through and makes it the baseline.
	g := kube.NewShrinkGuard(0.1)
	ctx := context.Background()
	_ = g.Check(ctx, nil, plan(0, 10))
	if err := g.Record(ctx, nil, plan(0, 5, "1", "2", "3", "4", "5")); err != nil {
		t.Fatal(err)
	}
	if err := g.Check(ctx, nil, plan(0, 5, "1", "2", "3", "4", "5")); err != nil {
		t.Fatalf("after accept: %v", err)
	}
}

// fakeEngine records the options Publish passes to Apply.
type fakeEngine struct{ got kube.ApplyOptions }

func (f *fakeEngine) Apply(ctx context.Context, g *topology.Graph, opts kube.ApplyOptions) (*kube.Result, error) {
	f.got = opts
	plan := &kube.Result{Engine: "fake", Refused: []string{"n1"}, DryRun: opts.DryRun}
	if err := kube.CheckGuard(ctx, g, plan, opts); err != nil {
		return nil, err
	}
	return plan, nil
}

func (f *fakeEngine) Render(context.Context, *topology.Graph) ([]byte, error) { return nil, nil }

func (f *fakeEngine) ContentType() string { return "text/plain" }

// TestPublishPassesOptions: the service's guard reaches Apply through
// Publish's options, and a refusal fails the publish.
func TestPublishPassesOptions(t *testing.T) {
	t.Parallel()
	refuse := func(context.Context, *topology.Graph, *kube.Result) error { return errors.New("too many refused") }
	tests := []struct {
		name    string
		mode    string
		guard   kube.Guard
		refused bool
	}{
		{"no guard", kube.ModeApply, nil, false},
		{"refusing guard", kube.ModeApply, refuse, true},
		{"refusing guard, dry run", kube.ModeDryRun, refuse, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := &fakeEngine{}
			err := kube.Publish(context.Background(), "fake", tc.mode, e, nil, engines.Deps{}.WithDefaults(),
				kube.ApplyOptions{Guard: tc.guard, Snapshot: "s"})
			if errors.Is(err, kube.ErrRefused) != tc.refused {
				t.Fatalf("Publish = %v, refused want %v", err, tc.refused)
			}
			if e.got.Snapshot != "s" || e.got.DryRun != (tc.mode == kube.ModeDryRun) {
				t.Errorf("Apply got %+v", e.got)
			}
		})
	}
}

// TestShrinkGuardTree: a plan with Result.Shrink (a tree of objects, not
// nodes) is weighed against what it found in the cluster, with no
// baseline; Record lets anything through.
func TestShrinkGuardTree(t *testing.T) {
	t.Parallel()
	plan := func(had, removed int) *kube.Result {
		return &kube.Result{Engine: "kueue-budgets", Shrink: &kube.Shrink{Had: had, Removed: removed, Kind: "accounts"}}
	}
	for _, tc := range []struct {
		name    string
		limit   float64
		plan    *kube.Result
		refused bool
	}{
		{"nothing found: first publish", 0.5, plan(0, 0), false},
		{"one of six deleted", 0.5, plan(6, 1), false},
		{"half deleted is within 50%", 0.5, plan(6, 3), false},
		{"three of five deleted", 0.5, plan(5, 3), true},
		{"every account deleted", 0.5, plan(4, 4), true},
		{"guard off", 1, plan(4, 4), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := kube.NewShrinkGuard(tc.limit)
			err := g.Check(context.Background(), nil, tc.plan)
			if (err != nil) != tc.refused {
				t.Errorf("Check = %v, refused want %v", err, tc.refused)
			}
			if err := g.Record(context.Background(), nil, tc.plan); err != nil {
				t.Errorf("Record = %v", err)
			}
		})
	}
}
