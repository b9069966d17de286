// Package kubescheduler_test runs the real kube-scheduler v1.37 with
// workload-aware topology scheduling against node labels written by
// toposcope's k8s-labels engine: a PodGroup whose topology constraint is
// our rack label must land in the one rack that fits.
package kubescheduler_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/testenv/consumertest"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// env is an apiserver that serves PodGroups with topology constraints,
// with one kube-scheduler on it.
var env = kubetest.NewEnvOptions(kubetest.Options{APIServerFlags: kubetest.WorkloadSchedulingFlags()},
	func(ctx context.Context, c *kubetest.Cluster) error {
		bin, err := kubetest.FindScheduler()
		if err != nil {
			return err
		}
		return c.StartScheduler(ctx, bin, kubetest.WorkloadSchedulingGates)
	})

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// bindTimeout bounds the wait for the scheduler to bind a gang.
const bindTimeout = 2 * time.Minute

// shape: 8 racks (leaves) of 4 nodes, 2 racks per block (spine). With the
// first node of racks 1-7 busy, 25 nodes are free and only rack 8 holds 4
// of them: an unconstrained gang lands all in rack 8 with a chance of 1 in
// C(25,4) = 12650 if the scheduler picked nodes uniformly.
var shape = consumertest.Shape{Nodes: 32, NodesPerLeaf: 4, LeavesPerSpine: 2}

// TestGangInOneRack: the first node of racks 1-7 is busy, so a gang of 4
// whole-node pods with our rack label as its topology constraint fits
// only in rack 8, the last by name; the scheduler must bind all four
// there. The control runs the same gang on the same fabric without our
// labels (and so without the constraint): the pods spread over racks.
func TestGangInOneRack(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		labelled bool
	}{
		{"labelled", true},
		{"control-unlabelled", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, f, ns := setUp(t)
			ctx := t.Context()
			racks := f.Members(0)
			ids := f.SwitchIDs(0)
			var busy []string
			for _, id := range ids[:len(ids)-1] {
				busy = append(busy, racks[id][0])
			}
			if err := c.BindPods(ctx, ns, busy, consumertest.GPUsPerNode); err != nil {
				t.Fatal(err)
			}
			var constraint *schedv1beta1.PodGroupSchedulingConstraints
			rackKey := ""
			if tt.labelled {
				keys, err := f.Publish(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				rackKey, _ = keys.Tier(0)
				constraint = &schedv1beta1.PodGroupSchedulingConstraints{Topology: []schedv1beta1.TopologyConstraint{{Key: rackKey}}}
			}
			bound := runGang(t, c, ns, f, 4, constraint)
			byRack := map[string][]string{}
			for _, n := range bound {
				byRack[f.Switch(n, 0)] = append(byRack[f.Switch(n, 0)], n)
			}
			want := ids[len(ids)-1]
			t.Logf("%s: gang bound to %v, by rack %v (busy nodes %v)", tt.name, bound, byRack, busy)
			if tt.labelled {
				if len(byRack) != 1 || len(byRack[want]) != 4 {
					t.Errorf("gang with constraint %s spans racks %v, want all 4 pods in %s (the only rack with 4 free nodes)", rackKey, byRack, want)
				}
				node, err := c.Core().CoreV1().Nodes().Get(ctx, bound[0], metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("domain chosen: %s=%s; nodes bound: %s", rackKey, node.Labels[rackKey], strings.Join(bound, ","))
			} else if len(byRack) < 2 {
				t.Errorf("control: unlabelled gang landed in one rack %v; the control must spread for the labelled run to prove anything", byRack)
			}
		})
	}
}

// createGang creates a gang PodGroup of n whole-node pods limited to the
// fabric's nodes and returns its name.
func createGang(t *testing.T, c *kubetest.Cluster, ns string, f *consumertest.Fabric, n int, constraint *schedv1beta1.PodGroupSchedulingConstraints) string {
	t.Helper()
	return createGangFor(t, c, ns, f, n, constraint, "")
}

// createGangFor is createGang for the named scheduler ("" for the
// default one).
func createGangFor(t *testing.T, c *kubetest.Cluster, ns string, f *consumertest.Fabric, n int, constraint *schedv1beta1.PodGroupSchedulingConstraints, scheduler string) string {
	t.Helper()
	ctx := t.Context()
	pg := &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "gang", Namespace: ns},
		Spec: schedv1beta1.PodGroupSpec{
			SchedulingPolicy:      schedv1beta1.PodGroupSchedulingPolicy{Gang: &schedv1beta1.GangSchedulingPolicy{MinCount: int32(n)}},
			SchedulingConstraints: constraint,
		},
	}
	if _, err := c.Core().SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create PodGroup: %v", err)
	}
	for i := range n {
		p := kubetest.GPUPod(ns, fmt.Sprintf("gang-%d", i), consumertest.GPUsPerNode, f.Selector())
		p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &pg.Name}
		p.Spec.SchedulerName = scheduler
		if _, err := c.Core().CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod: %v", err)
		}
	}
	return pg.Name
}

// runGang is createGang, then waits until every pod is bound and returns
// the nodes, sorted.
func runGang(t *testing.T, c *kubetest.Cluster, ns string, f *consumertest.Fabric, n int, constraint *schedv1beta1.PodGroupSchedulingConstraints) []string {
	t.Helper()
	ctx := t.Context()
	pg := createGang(t, c, ns, f, n, constraint)
	nodes := map[string]string{}
	err := kubetest.Poll(ctx, bindTimeout, "the gang's pods to be bound", func(ctx context.Context) (bool, error) {
		pods, err := c.Core().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if strings.HasPrefix(p.Name, "gang-") && p.Spec.NodeName != "" {
				nodes[p.Name] = p.Spec.NodeName
			}
		}
		return len(nodes) == n, nil
	})
	if err != nil {
		got, _ := c.Core().SchedulingV1beta1().PodGroups(ns).Get(ctx, pg, metav1.GetOptions{})
		t.Fatalf("%v; bound so far %v; PodGroup status %+v\n%s", err, nodes, got.Status, c.SchedulerLog())
	}
	return slices.Sorted(maps.Values(nodes))
}

// TestGangWithoutRoomStaysPending: with the first node of every rack busy,
// no rack holds a gang of 4 whole-node pods constrained to our rack label,
// though 24 nodes are free. The scheduler must bind none of them and mark
// the PodGroup unschedulable.
func TestGangWithoutRoomStaysPending(t *testing.T) {
	t.Parallel()
	c, f, ns := setUp(t)
	ctx := t.Context()
	var busy []string
	for _, id := range f.SwitchIDs(0) {
		busy = append(busy, f.Members(0)[id][0])
	}
	if err := c.BindPods(ctx, ns, busy, consumertest.GPUsPerNode); err != nil {
		t.Fatal(err)
	}
	keys, err := f.Publish(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	rackKey, _ := keys.Tier(0)
	constraint := &schedv1beta1.PodGroupSchedulingConstraints{Topology: []schedv1beta1.TopologyConstraint{{Key: rackKey}}}
	pg := createGang(t, c, ns, f, 4, constraint)
	var reason, msg string
	err = kubetest.Poll(ctx, bindTimeout, "the PodGroup to be marked unschedulable", func(ctx context.Context) (bool, error) {
		got, err := c.Core().SchedulingV1beta1().PodGroups(ns).Get(ctx, pg, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == schedv1beta1.PodGroupInitiallyScheduled && cond.Status == metav1.ConditionFalse {
				reason, msg = cond.Reason, cond.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, c.SchedulerLog())
	}
	pods, err := c.Core().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, "gang-") && p.Spec.NodeName != "" {
			t.Errorf("pod %s bound to %s although no rack has room for the gang", p.Name, p.Spec.NodeName)
		}
	}
	if reason != schedv1beta1.PodGroupReasonUnschedulable {
		t.Errorf("PodGroup reason %q, want %q (%s)", reason, schedv1beta1.PodGroupReasonUnschedulable, msg)
	}
	t.Logf("pending as expected: %s: %s", reason, msg)
}

// setUp creates the test's fabric of Ready nodes on the suite's cluster
// and a namespace for its pods.
func setUp(t *testing.T) (*kubetest.Cluster, *consumertest.Fabric, string) {
	t.Helper()
	return setUpShape(t, shape)
}

// setUpShape is setUp with a fabric of shape s.
func setUpShape(t testing.TB, s consumertest.Shape) (*kubetest.Cluster, *consumertest.Fabric, string) {
	t.Helper()
	c := env.Require(t)
	f, err := consumertest.NewFabric(c.Prefix(t), s)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Create(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	return c, f, c.WorkNamespace(t.Context(), t)
}
