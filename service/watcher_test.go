package service_test

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// env is the package's apiserver, owned by TestMain.
var env = kubetest.NewEnv()

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

func node(labels, annotations map[string]string, providerID string, ready bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels, Annotations: annotations}}
	n.Spec.ProviderID = providerID
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
	return n
}

func TestNodeChanged(t *testing.T) {
	t.Parallel()
	w := service.NewNodeWatcher(nil, service.NodeWatcherConfig{Keys: app.WatchKeys(app.Registry())}, func(string) {}, nil)
	base := node(map[string]string{"nvidia.com/gpu.clique": "a.1", "team": "ml"}, map[string]string{"toposcope.io/region": "r1"}, "aws:///z/i-1", true)
	tests := []struct {
		name string
		next *corev1.Node
		want string
	}{
		{"nothing", node(map[string]string{"nvidia.com/gpu.clique": "a.1", "team": "ml"}, map[string]string{"toposcope.io/region": "r1"}, "aws:///z/i-1", true), ""},
		{"foreign label", node(map[string]string{"nvidia.com/gpu.clique": "a.1", "team": "hpc"}, map[string]string{"toposcope.io/region": "r1"}, "aws:///z/i-1", true), ""},
		{"clique", node(map[string]string{"nvidia.com/gpu.clique": "a.2", "team": "ml"}, map[string]string{"toposcope.io/region": "r1"}, "aws:///z/i-1", true), "changed label nvidia.com/gpu.clique"},
		{"clique removed", node(map[string]string{"team": "ml"}, map[string]string{"toposcope.io/region": "r1"}, "aws:///z/i-1", true), "changed label nvidia.com/gpu.clique"},
		{"prefix annotation added", node(map[string]string{"nvidia.com/gpu.clique": "a.1", "team": "ml"}, map[string]string{"toposcope.io/region": "r1", "toposcope.io/instance-id": "x"}, "aws:///z/i-1", true), "changed annotation toposcope.io/instance-id"},
		{"aws layer", node(map[string]string{"nvidia.com/gpu.clique": "a.1", "team": "ml", "topology.k8s.aws/network-node-layer-1": "nn-1"}, map[string]string{"toposcope.io/region": "r1"}, "aws:///z/i-1", true), "changed label topology.k8s.aws/network-node-layer-1"},
		{"crusoe pod", node(map[string]string{"nvidia.com/gpu.clique": "a.1", "team": "ml", "crusoe.ai/pod.id": "pod-1"}, map[string]string{"toposcope.io/region": "r1"}, "aws:///z/i-1", true), "changed label crusoe.ai/pod.id"},
		{"provider ID", node(map[string]string{"nvidia.com/gpu.clique": "a.1", "team": "ml"}, map[string]string{"toposcope.io/region": "r1"}, "aws:///z/i-2", true), "changed its provider ID"},
		{"not ready", node(map[string]string{"nvidia.com/gpu.clique": "a.1", "team": "ml"}, map[string]string{"toposcope.io/region": "r1"}, "aws:///z/i-1", false), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := w.NodeChanged(base, tc.next); got != tc.want {
				t.Errorf("NodeChanged = %q, want %q", got, tc.want)
			}
		})
	}
	notReady := node(nil, nil, "", false)
	if got := w.NodeChanged(notReady, node(nil, nil, "", true)); got != "became Ready" {
		t.Errorf("becoming Ready = %q", got)
	}
}

// TestNodeWatcher runs the watcher on the real apiserver: the initial
// LIST triggers nothing, and each relevant change triggers in order.
func TestNodeWatcher(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	p := c.Prefix(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nodes := c.Core().CoreV1().Nodes()
	first := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: p + "-a", Labels: map[string]string{kubetest.PrefixLabel: p}}}
	if _, err := nodes.Create(ctx, first, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The informer's initial LIST must hold p-a: wait until a LIST with
	// the same selector shows it (a busy apiserver's cache may lag).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		list, err := nodes.List(ctx, metav1.ListOptions{LabelSelector: kubetest.Selector(p)})
		if err == nil && len(list.Items) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s-a not listed: %v", p, err)
		}
	}
	reasons := make(chan string, 16)
	w := service.NewNodeWatcher(c.Kube(), service.NodeWatcherConfig{Keys: app.WatchKeys(app.Registry()), Selector: kubetest.Selector(p)},
		func(r string) { reasons <- r }, nil)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()

	select {
	case <-w.Synced():
	case err := <-done:
		t.Fatalf("watcher stopped: %v", err)
	}
	next := func(want string) {
		t.Helper()
		select {
		case got := <-reasons:
			if got != want {
				t.Fatalf("trigger %q, want %q", got, want)
			}
		case err := <-done:
			t.Fatalf("watcher stopped: %v", err)
		case <-time.After(time.Minute):
			t.Fatalf("no trigger; want %q", want)
		}
	}
	second := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: p + "-b", Labels: map[string]string{kubetest.PrefixLabel: p}}}
	if _, err := nodes.Create(ctx, second, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	next("node " + p + "-b added") // and not the initial p-a

	patch := func(name, body string, sub ...string) {
		t.Helper()
		if _, err := nodes.Patch(ctx, name, "application/merge-patch+json", []byte(body), metav1.PatchOptions{}, sub...); err != nil {
			t.Fatal(err)
		}
	}
	patch(p+"-a", `{"metadata":{"labels":{"team":"ml"}}}`) // not watched
	patch(p+"-a", `{"metadata":{"labels":{"nvidia.com/gpu.clique":"u.1"}}}`)
	next("node " + p + "-a changed label nvidia.com/gpu.clique")
	patch(p+"-b", `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"test","lastHeartbeatTime":null,"lastTransitionTime":null}]}}`, "status")
	next("node " + p + "-b became Ready")
	if err := nodes.Delete(ctx, p+"-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	next("node " + p + "-b removed")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}
