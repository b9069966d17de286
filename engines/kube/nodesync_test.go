package kube

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/topology"
)

func TestDiffNode(t *testing.T) {
	t.Parallel()
	keys := DefaultLabelConfig()
	k := keys.Keys()
	spec := NodeSpec{ManagedLabel: k.Managed, ManagedAnnotation: k.Managed}
	const p = "topology.toposcope.io/"
	tests := []struct {
		name       string
		have       map[string]string
		want       map[string]string
		wantPatch  string // "" = no patch
		wantRemove []string
	}{
		{name: "equal", have: map[string]string{p + "tier-0": "a", "team": "x"}, want: map[string]string{p + "tier-0": "a"}},
		{name: "set", have: map[string]string{"team": "x"}, want: map[string]string{p + "tier-0": "a"},
			wantPatch: `{"metadata":{"labels":{"topology.toposcope.io/tier-0":"a"}}}`},
		{name: "stale removed, foreign kept", have: map[string]string{p + "tier-5": "old", "team": "x", p + "other": "y"}, want: map[string]string{},
			wantPatch: `{"metadata":{"labels":{"topology.toposcope.io/tier-5":null}}}`, wantRemove: []string{"label " + p + "tier-5"}},
		{name: "changed", have: map[string]string{p + "tier-0": "a"}, want: map[string]string{p + "tier-0": "b"},
			wantPatch: `{"metadata":{"labels":{"topology.toposcope.io/tier-0":"b"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := node("n", tt.have, nil, "")
			body, c := diffNode(n, tt.want, nil, spec)
			if string(body) != tt.wantPatch {
				t.Errorf("patch = %s, want %s", body, tt.wantPatch)
			}
			if strings.Join(c.Remove, ",") != strings.Join(tt.wantRemove, ",") {
				t.Errorf("removed = %v, want %v", c.Remove, tt.wantRemove)
			}
		})
	}
}

func TestForEach(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	errs := forEach(context.Background(), 100, 7, func(i int) error {
		calls.Add(1)
		if i%10 == 0 {
			return errors.New("boom")
		}
		return nil
	})
	if calls.Load() != 100 || len(errs) != 10 {
		t.Errorf("calls = %d, errors = %d; want 100, 10", calls.Load(), len(errs))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	errs = forEach(ctx, 5, 2, func(int) error { return nil })
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("cancelled: %v", errs)
	}
}

func TestGuardAndResult(t *testing.T) {
	t.Parallel()
	res := &Result{Engine: "k8s-labels", Changed: 2, Unchanged: 3, Refused: []string{"n1", "n2", "n3"}, DryRun: true,
		Changes: []Change{{Kind: "Node", Name: "n4", Op: "patch", Set: map[string]string{"label a": "1"}, Remove: []string{"label b"}}}}
	refuse := func(_ context.Context, _ *topology.Graph, plan *Result) error {
		if len(plan.Refused) > 2 {
			return errors.New("too many nodes missing")
		}
		return nil
	}
	err := CheckGuard(context.Background(), nil, res, ApplyOptions{Guard: refuse})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "too many nodes missing") {
		t.Errorf("CheckGuard = %v", err)
	}
	if err := CheckGuard(context.Background(), nil, res, ApplyOptions{}); err != nil {
		t.Errorf("no guard: %v", err)
	}
	want := "k8s-labels: 2 to change, 3 unchanged, 3 refused (not placed by the graph, left as they are: n[1-3])"
	if got := res.Summary(); got != want {
		t.Errorf("Summary = %q\nwant      %q", got, want)
	}
	if got := res.Changes[0].String(); got != "patch Node/n4: set label a=1; remove label b" {
		t.Errorf("Change = %q", got)
	}
}

func TestClientConfig(t *testing.T) {
	t.Parallel()
	c := kubeclient.DefaultClientConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.QPS, c.Concurrency = 0, 0
	err := config.Join(c.Validate(), CheckMode("mode", "bogus"))
	var n int
	for _, f := range []string{"qps", "concurrency", "mode"} {
		if strings.Contains(err.Error(), f+":") {
			n++
		}
	}
	if n != 3 || !errors.Is(err, config.ErrInvalid) {
		t.Errorf("errors = %v", err)
	}
	if e := PrefixFields("slurm", config.Errorf("plugin", "bad")); !strings.HasPrefix(e.Error(), "slurm.plugin:") {
		t.Errorf("PrefixFields = %v", e)
	}
}

func node(name string, labels, annotations map[string]string, providerID string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
	}
}
