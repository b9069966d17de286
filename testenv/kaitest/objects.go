package kaitest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/toposcope/toposcope/testenv/kubetest"
)

// GPU is the extended resource of NVIDIA GPUs.
const GPU corev1.ResourceName = "nvidia.com/gpu"

// The KAI resources the tests create and read.
var (
	// QueueGVR is scheduling.run.ai/v2 Queue (cluster-scoped).
	QueueGVR = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v2", Resource: "queues"}
	// PodGroupGVR is scheduling.run.ai/v2alpha2 PodGroup.
	PodGroupGVR = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v2alpha2", Resource: "podgroups"}
	// BindRequestGVR is scheduling.run.ai/v1alpha2 BindRequest.
	BindRequestGVR = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v1alpha2", Resource: "bindrequests"}
	// TopologyGVR is kai.scheduler/v1alpha1 Topology (cluster-scoped).
	TopologyGVR = schema.GroupVersionResource{Group: "kai.scheduler", Version: "v1alpha1", Resource: "topologies"}
)

// Labels and annotations KAI reads.
const (
	// QueueLabel names a PodGroup's queue.
	QueueLabel = "kai.scheduler/queue"
	// PodGroupAnnotation names a pod's PodGroup.
	PodGroupAnnotation = "pod-group-name"
)

// InstallCRDs installs KAI's CRDs (Queue, PodGroup, BindRequest,
// Topology, ...) on c.
func InstallCRDs(ctx context.Context, c *kubetest.Cluster, in Install) error {
	return c.InstallCRDs(ctx, in.CRDs...)
}

// NodeResources is what each test Node offers.
type NodeResources struct {
	CPU, Memory string
	Pods        int
	GPUs        int
}

// DefaultNodeResources is an 8-GPU node.
var DefaultNodeResources = NodeResources{CPU: "64", Memory: "512Gi", Pods: 110, GPUs: 8}

// ReadyNodes creates the Nodes and makes each look like a healthy node
// with a kubelet: status Ready=True with capacity and allocatable r, and
// without the node.kubernetes.io/not-ready taint that the apiserver's
// TaintNodesByCondition admission puts on a new Node.
func ReadyNodes(ctx context.Context, c *kubetest.Cluster, nodes []*corev1.Node, r NodeResources) error {
	if err := c.CreateNodes(ctx, nodes, 8); err != nil {
		return err
	}
	list := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(r.CPU),
		corev1.ResourceMemory: resource.MustParse(r.Memory),
		corev1.ResourcePods:   *resource.NewQuantity(int64(r.Pods), resource.DecimalSI),
		GPU:                   *resource.NewQuantity(int64(r.GPUs), resource.DecimalSI),
	}
	api := c.Core().CoreV1().Nodes()
	for _, n := range nodes {
		cur, err := api.Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("kaitest: get node %s: %w", n.Name, err)
		}
		now := metav1.Now()
		cur.Status.Capacity, cur.Status.Allocatable = list.DeepCopy(), list.DeepCopy()
		cur.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
		if cur, err = api.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("kaitest: node %s status: %w", n.Name, err)
		}
		cur.Spec.Taints = slices.DeleteFunc(cur.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
		if _, err := api.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("kaitest: node %s taints: %w", n.Name, err)
		}
	}
	return nil
}

// Namespace creates a namespace for the test with its default
// ServiceAccount (which no controller manager creates here, and without
// which the apiserver refuses pods).
func Namespace(t testing.TB, c *kubetest.Cluster) string {
	t.Helper()
	ns := c.Namespace(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	if _, err := c.Core().CoreV1().ServiceAccounts(ns).Create(context.Background(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create default service account: %v", err)
	}
	return ns
}

// CreateQueues creates a parent Queue name+"-parent" and a leaf Queue
// name under it, both without quota and without limit, in node pool pool
// (a scheduler sees only the Queues of its pool), and returns the leaf's
// name.
func CreateQueues(ctx context.Context, c *kubetest.Cluster, name, pool string) (string, error) {
	unlimited := map[string]any{"quota": int64(0), "limit": int64(-1), "overQuotaWeight": int64(1)}
	for _, q := range []struct{ name, parent string }{{name + "-parent", ""}, {name, name + "-parent"}} {
		spec := map[string]any{"resources": map[string]any{"gpu": unlimited, "cpu": unlimited, "memory": unlimited}}
		if q.parent != "" {
			spec["parentQueue"] = q.parent
		}
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
			"metadata": map[string]any{"name": q.name, "labels": map[string]any{NodePoolLabel: pool}}, "spec": spec,
		}}
		if _, err := c.Dynamic().Resource(QueueGVR).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return "", fmt.Errorf("kaitest: create queue %s: %w", q.name, err)
		}
	}
	return name, nil
}

// BoundPod creates a Running pod already on node that holds gpus GPUs,
// as a pod placed before the test would: it fills the node.
func BoundPod(ctx context.Context, c *kubetest.Cluster, ns, name, node string, gpus int) error {
	p := pod(ns, name, gpus)
	p.Spec.NodeName = node
	created, err := c.Core().CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("kaitest: create pod %s: %w", name, err)
	}
	created.Status.Phase = corev1.PodRunning
	created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := c.Core().CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("kaitest: pod %s status: %w", name, err)
	}
	return nil
}

func pod(ns, name string, gpus int) *corev1.Pod {
	q := *resource.NewQuantity(int64(gpus), resource.DecimalSI)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "work", Image: "busybox",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{GPU: q}, Requests: corev1.ResourceList{GPU: q}}}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
}

// Gang is a PodGroup and its pods. KAI v0.12.0 keys PodGroups by name
// alone, so the name must be unique in the cluster, not only in the
// namespace.
type Gang struct {
	Namespace, Name string
	// Queue is the leaf Queue; Pool the node pool (see NodePoolLabel).
	Queue, Pool string
	// Pods is the number of pods, each asking for GPUsPerPod GPUs; all
	// must be placed together (minMember = Pods).
	Pods, GPUsPerPod int
	// Topology names the kai.scheduler Topology; RequiredLevel and
	// PreferredLevel are its topologyConstraint (all empty: none).
	Topology, RequiredLevel, PreferredLevel string
}

// PodNames returns the names of the gang's pods.
func (g Gang) PodNames() []string {
	out := make([]string, g.Pods)
	for i := range out {
		out[i] = g.Name + "-" + strconv.Itoa(i)
	}
	return out
}

// Create creates the PodGroup, then the pods with schedulerName
// kai-scheduler and the pod-group-name annotation.
func (g Gang) Create(ctx context.Context, c *kubetest.Cluster) error {
	spec := map[string]any{"queue": g.Queue, "minMember": int64(g.Pods)}
	tc := map[string]any{}
	for k, v := range map[string]string{"topology": g.Topology, "requiredTopologyLevel": g.RequiredLevel, "preferredTopologyLevel": g.PreferredLevel} {
		if v != "" {
			tc[k] = v
		}
	}
	if len(tc) > 0 {
		spec["topologyConstraint"] = tc
	}
	pg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
		"metadata": map[string]any{"name": g.Name, "namespace": g.Namespace,
			"labels": map[string]any{QueueLabel: g.Queue, NodePoolLabel: g.Pool}},
		"spec": spec,
	}}
	if _, err := c.Dynamic().Resource(PodGroupGVR).Namespace(g.Namespace).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kaitest: create podgroup %s: %w", g.Name, err)
	}
	for _, name := range g.PodNames() {
		p := pod(g.Namespace, name, g.GPUsPerPod)
		p.Spec.SchedulerName = SchedulerName
		p.Annotations = map[string]string{PodGroupAnnotation: g.Name}
		p.Labels = map[string]string{QueueLabel: g.Queue, NodePoolLabel: g.Pool}
		if _, err := c.Core().CoreV1().Pods(g.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("kaitest: create pod %s: %w", name, err)
		}
	}
	return nil
}

// WaitPlaced polls the BindRequests of the gang's namespace until every
// pod of the gang has one, and returns pod name -> spec.selectedNode. It
// fails when s exits or timeout passes, with the PodGroup's status.
func (g Gang) WaitPlaced(ctx context.Context, c *kubetest.Cluster, s *Scheduler, timeout time.Duration) (map[string]string, error) {
	want := g.PodNames()
	var placed map[string]string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if exited, err := s.Exited(); exited {
			return false, err
		}
		list, err := c.Dynamic().Resource(BindRequestGVR).Namespace(g.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil // the next poll retries
		}
		placed = map[string]string{}
		for _, br := range list.Items {
			pod, _, _ := unstructured.NestedString(br.Object, "spec", "podName")
			node, _, _ := unstructured.NestedString(br.Object, "spec", "selectedNode")
			if slices.Contains(want, pod) {
				placed[pod] = node
			}
		}
		return len(placed) == len(want), nil
	})
	if err != nil {
		return placed, fmt.Errorf("kaitest: gang %s: %d of %d pods placed: %w; podgroup status: %s", g.Name, len(placed), len(want), err, g.status(ctx, c))
	}
	return placed, nil
}

// WaitUnschedulable polls the PodGroup until KAI records a scheduling
// condition on it (it found no placement for the gang) and returns the
// conditions' messages; it then checks that no pod of the gang has a
// BindRequest.
func (g Gang) WaitUnschedulable(ctx context.Context, c *kubetest.Cluster, s *Scheduler, timeout time.Duration) (string, error) {
	var msgs []string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if exited, err := s.Exited(); exited {
			return false, err
		}
		pg, err := c.Dynamic().Resource(PodGroupGVR).Namespace(g.Namespace).Get(ctx, g.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil // the next poll retries
		}
		conds, _, _ := unstructured.NestedSlice(pg.Object, "status", "schedulingConditions")
		msgs = msgs[:0]
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			msgs = append(msgs, fmt.Sprintf("%v: %v", m["type"], m["message"]))
		}
		return len(msgs) > 0, nil
	})
	if err != nil {
		return "", fmt.Errorf("kaitest: gang %s: no scheduling condition: %w; podgroup status: %s", g.Name, err, g.status(ctx, c))
	}
	list, err := c.Dynamic().Resource(BindRequestGVR).Namespace(g.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("kaitest: list bind requests: %w", err)
	}
	for _, br := range list.Items {
		if pod, _, _ := unstructured.NestedString(br.Object, "spec", "podName"); slices.Contains(g.PodNames(), pod) {
			return "", fmt.Errorf("kaitest: gang %s is unschedulable (%s) but pod %s has a BindRequest", g.Name, strings.Join(msgs, "; "), pod)
		}
	}
	return strings.Join(msgs, "; "), nil
}

// status summarises the PodGroup's conditions and scheduling messages.
func (g Gang) status(ctx context.Context, c *kubetest.Cluster) string {
	pg, err := c.Dynamic().Resource(PodGroupGVR).Namespace(g.Namespace).Get(ctx, g.Name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	st, _, _ := unstructured.NestedMap(pg.Object, "status")
	return strings.TrimSpace(fmt.Sprint(st))
}
