package kubescheduler_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/podsource"
	"github.com/toposcope/toposcope/service/extender"
	"github.com/toposcope/toposcope/testenv/consumertest"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// TestExtenderGang: 4 spines of 2 racks of 4 nodes; the first node of
// racks 1-6 is busy, so only spine 4 (racks 7 and 8) has 8 free nodes.
// An 8-pod × 8-GPU gang scheduled by a kube-scheduler that calls
// toposcope's extender is bound to the node set toposcope's planner
// ranks first (POST /v1/placements). The control run schedules the same
// gang with the default scheduler, without the extender: it spreads.
func TestExtenderGang(t *testing.T) {
	t.Parallel()
	for _, extended := range []bool{true, false} {
		name := map[bool]string{true: "extender", false: "control-default-scheduler"}[extended]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, f, ns := setUp(t)
			busy := bindFirstOfRacks(t, c, f, ns)
			scheduler, logs := "default-scheduler", c.SchedulerLog
			var want []string
			if extended {
				ts := startToposcope(t, c, f, ns)
				ts.waitLedger(t, len(busy))
				want = ts.place(t, placement.Request{Account: "team", Nodes: 8, GPUsPerNode: consumertest.GPUsPerNode})
				slices.Sort(want)
				var s *kubetest.Scheduler
				scheduler, s = startExtendedScheduler(t, c, ts)
				logs = func() string { return s.Log() + "\n" + ts.log.String() }
			}
			got := runTrainGang(t, c, f, ns, scheduler, logs)
			spines := map[string]int{}
			for _, n := range got {
				spines[f.Switch(n, 1)]++
			}
			t.Logf("%s: gang bound to %v (spines %v); busy %v", name, got, spines, busy)
			if extended {
				t.Logf("toposcope's planner ranked first: %v", want)
				if !slices.Equal(got, want) {
					t.Errorf("gang bound to %v, want the planner's first candidate %v", got, want)
				}
			} else if len(spines) < 2 {
				t.Errorf("control: the gang landed in one spine %v without the extender; the control must spread for the extender run to prove anything", spines)
			}
		})
	}
}

// TestExtenderFillsPartlyUsedNode: one node of 8 has 7 GPUs taken; a
// 1-GPU pod scheduled with the extender fills it exactly, where the
// default scheduler (least allocated first) puts it on a free node.
func TestExtenderFillsPartlyUsedNode(t *testing.T) {
	t.Parallel()
	small := consumertest.Shape{Nodes: 8, NodesPerLeaf: 4, LeavesPerSpine: 2}
	for _, extended := range []bool{true, false} {
		name := map[bool]string{true: "extender", false: "control-default-scheduler"}[extended]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, f, ns := setUpShape(t, small)
			partial := f.Nodes[5]
			occupant{name: "seven", node: partial, account: "other", gpus: 7}.create(t, c, ns)
			scheduler, logs := "default-scheduler", c.SchedulerLog
			if extended {
				ts := startToposcope(t, c, f, ns)
				ts.waitLedger(t, 1)
				var s *kubetest.Scheduler
				scheduler, s = startExtendedScheduler(t, c, ts)
				logs = func() string { return s.Log() + "\n" + ts.log.String() }
			}
			p := schedulerPod(ns, "one", scheduler, 1, f, "team")
			if _, err := c.Core().CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			got := podNode(t, c, ns, "one", logs)
			t.Logf("%s: 1-GPU pod bound to %s (partly used node %s)", name, got, partial)
			if extended && got != partial {
				t.Errorf("1-GPU pod bound to %s, want %s, whose one free GPU it fills", got, partial)
			}
			if !extended && got == partial {
				t.Errorf("control: the default scheduler also chose the partly used node %s; the control must differ", partial)
			}
		})
	}
}

// TestExtenderPreemption: four full nodes of an over-served account;
// three hold pods inside their 2-hour minimum runtime at priority 0,
// one holds unallocated work at priority 100. A priority-1000 pod of an
// under-served account needs a whole node. The default scheduler
// preempts the lowest-priority victim, a protected pod (the control);
// with the extender the protected nodes are refused and the unallocated
// pod is the victim.
func TestExtenderPreemption(t *testing.T) {
	t.Parallel()
	tiny := consumertest.Shape{Nodes: 4, NodesPerLeaf: 2, LeavesPerSpine: 2}
	for _, extended := range []bool{true, false} {
		name := map[bool]string{true: "extender", false: "control-default-scheduler"}[extended]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, f, ns := setUpShape(t, tiny)
			ctx := t.Context()
			mid, high := priorityClass(t, c, "mid", 100), priorityClass(t, c, "high", 1000)
			occ := []occupant{
				{name: "prot-1", node: f.Nodes[0], account: "over", minRuntime: "2h", gpus: 8},
				{name: "prot-2", node: f.Nodes[1], account: "over", minRuntime: "2h", gpus: 8},
				{name: "prot-3", node: f.Nodes[2], account: "over", minRuntime: "2h", gpus: 8},
				{name: "free-4", node: f.Nodes[3], account: "over", priorityClass: mid, gpus: 8},
			}
			for _, o := range occ {
				o.create(t, c, ns)
			}
			scheduler, logs := "default-scheduler", c.SchedulerLog
			var ts *toposcope
			if extended {
				ts = startToposcope(t, c, f, ns)
				ts.waitLedger(t, len(occ))
				var s *kubetest.Scheduler
				scheduler, s = startExtendedScheduler(t, c, ts)
				logs = func() string { return s.Log() + "\n" + ts.log.String() }
			}
			p := schedulerPod(ns, "urgent", scheduler, 8, f, "under")
			p.Spec.PriorityClassName = high
			p.Annotations[podsource.DefaultMinRuntimeAnnotation] = "1h"
			if _, err := c.Core().CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			var nominated string
			var evicted []string
			err := kubetest.Poll(ctx, bindTimeout, "the urgent pod to preempt", func(ctx context.Context) (bool, error) {
				got, err := c.Core().CoreV1().Pods(ns).Get(ctx, "urgent", metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				nominated = got.Status.NominatedNodeName
				evicted = evicted[:0]
				for _, o := range occ {
					v, err := c.Core().CoreV1().Pods(ns).Get(ctx, o.name, metav1.GetOptions{})
					if err != nil || v.DeletionTimestamp != nil {
						evicted = append(evicted, o.name)
					}
				}
				return nominated != "" && len(evicted) > 0, nil
			})
			if err != nil {
				t.Fatal(err.Error() + "\n" + logs())
			}
			t.Logf("%s: urgent pod nominated to %s; evicted %v", name, nominated, evicted)
			if extended {
				if nominated != f.Nodes[3] || !slices.Equal(evicted, []string{"free-4"}) {
					t.Errorf("nominated %s, evicted %v; want %s and free-4 alone (the others are protected)", nominated, evicted, f.Nodes[3])
				}
				if !strings.Contains(ts.log.String(), "preemption narrowed") {
					t.Errorf("toposcope logged no narrowed preemption:\n%s", ts.log.String())
				}
			} else if slices.Contains(evicted, "free-4") || len(evicted) == 0 {
				t.Errorf("control: the default scheduler evicted %v; the control must pick a protected pod (lowest priority) for the extender run to prove anything", evicted)
			}
		})
	}
}

// TestExtenderPodGroupGang: a 1.37 PodGroup gang (spec.schedulingGroup,
// no size annotation) of 4 whole-node pods, on the fabric of
// TestGangInOneRack (only rack 8 has 4 free nodes), scheduled by a
// kube-scheduler with workload-aware scheduling and the extender: the
// extender reads the gang's size from the PodGroup (minCount) and the
// pods are bound to the planner's first candidate.
func TestExtenderPodGroupGang(t *testing.T) {
	t.Parallel()
	c, f, ns := setUp(t)
	racks, ids := f.Members(0), f.SwitchIDs(0)
	var busy []string
	for _, id := range ids[:len(ids)-1] {
		busy = append(busy, racks[id][0])
	}
	if err := c.BindPods(t.Context(), ns, busy, consumertest.GPUsPerNode); err != nil {
		t.Fatal(err)
	}
	ts := startToposcope(t, c, f, ns)
	ts.waitLedger(t, len(busy))
	want := ts.place(t, placement.Request{Account: ns, Nodes: 4, GPUsPerNode: consumertest.GPUsPerNode})
	slices.Sort(want)
	bin, err := kubetest.FindScheduler()
	if err != nil {
		t.Fatal(err)
	}
	name := c.Prefix(t) + "-toposcope"
	s, err := c.StartSchedulerWith(t.Context(), bin, kubetest.SchedulerOptions{Name: name,
		Gates: kubetest.WorkloadSchedulingGates, Extenders: extenderYAML(ts.url)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	pg := createGangFor(t, c, ns, f, 4, nil, name)
	bound := map[string]bool{}
	for i := range 4 {
		bound[podNode(t, c, ns, fmt.Sprintf("gang-%d", i), func() string { return s.Log() + "\n" + ts.log.String() })] = true
	}
	got := slices.Sorted(maps.Keys(bound))
	t.Logf("PodGroup %s bound to %v; the planner ranked first %v", pg, got, want)
	if !slices.Equal(got, want) {
		t.Errorf("PodGroup gang bound to %v, want the planner's first candidate %v", got, want)
	}
	if !strings.Contains(ts.log.String(), "gang placed and held") || !strings.Contains(ts.log.String(), "pods=4") {
		t.Errorf("toposcope did not place the gang of 4 from its PodGroup:\n%s", ts.log.String())
	}
}

// TestExtenderRBAC reads a PodGroup's size as a ServiceAccount bound to
// exactly charts/toposcope/rbac/extender.yaml: it works, every rule is
// used, and without the rules the apiserver refuses.
func TestExtenderRBAC(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	ctx := t.Context()
	ns := c.WorkNamespace(ctx, t)
	rules, err := kubetest.LoadRules("../../charts/toposcope/rbac/extender.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pg := &schedv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: ns},
		Spec: schedv1beta1.PodGroupSpec{SchedulingPolicy: schedv1beta1.PodGroupSchedulingPolicy{Gang: &schedv1beta1.GangSchedulingPolicy{MinCount: 6}}}}
	if _, err := c.Core().SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		granted bool
	}{{"granted", true}, {"no-rules", false}} {
		var cluster []rbacv1.PolicyRule
		if tc.granted {
			cluster = rules.Cluster
		}
		rc, err := c.ServiceAccountConfig(ctx, ns, "extender-"+tc.name, cluster, nil)
		if err != nil {
			t.Fatal(err)
		}
		clients, err := kubeclient.NewClients(rc)
		if err != nil {
			t.Fatal(err)
		}
		n, err := extender.PodGroups{Core: clients.Core}.Size(ctx, ns, "train")
		switch {
		case tc.granted && (err != nil || n != 6):
			t.Errorf("with charts/toposcope/rbac/extender.yaml: size %d, %v; want 6", n, err)
		case !tc.granted && !apierrors.IsForbidden(err):
			t.Errorf("without the rules: %d, %v; want Forbidden", n, err)
		}
	}
	if len(rules.Cluster) != 1 || !slices.Equal(rules.Cluster[0].Verbs, []string{"get"}) {
		t.Errorf("charts/toposcope/rbac/extender.yaml grants %v; the extender only gets PodGroups", rules.Cluster)
	}
}

// bindFirstOfRacks binds a full-node pod to the first node of racks 1-6
// (of the 4 spines × 2 racks × 4 nodes fabric), so that only spine 4
// (racks 7 and 8) has 8 free nodes, and returns those nodes.
func bindFirstOfRacks(t *testing.T, c *kubetest.Cluster, f *consumertest.Fabric, ns string) []string {
	t.Helper()
	racks, ids := f.Members(0), f.SwitchIDs(0)
	var busy []string
	for _, id := range ids[:6] {
		busy = append(busy, racks[id][0])
	}
	if err := c.BindPods(t.Context(), ns, busy, consumertest.GPUsPerNode); err != nil {
		t.Fatal(err)
	}
	return busy
}

// runTrainGang creates the 8 pods × 8 GPUs of gang "train" for
// scheduler and returns the nodes they are bound to, sorted.
func runTrainGang(t *testing.T, c *kubetest.Cluster, f *consumertest.Fabric, ns, scheduler string, logs func() string) []string {
	t.Helper()
	var pods []string
	for i := range 8 {
		p := schedulerPod(ns, fmt.Sprintf("gang-%d", i), scheduler, consumertest.GPUsPerNode, f, "team")
		p.Labels["toposcope.io/gang"] = "train"
		p.Annotations["toposcope.io/gang-size"] = "8"
		if _, err := c.Core().CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p.Name)
	}
	bound := map[string]bool{}
	for _, p := range pods {
		bound[podNode(t, c, ns, p, logs)] = true
	}
	return slices.Sorted(maps.Keys(bound))
}
