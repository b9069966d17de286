package kubetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// GPUResource is the extended resource of NVIDIA GPUs.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// Capacity is what a ready node offers schedulers.
type Capacity struct {
	// CPU, Memory and GPUs are allocatable quantities ("64", "512Gi", 8);
	// Pods is the pod count (default 110).
	CPU, Memory string
	GPUs, Pods  int
}

// resources returns c as a ResourceList, with defaults for empty fields.
func (c Capacity) resources() (corev1.ResourceList, error) {
	cpu, mem, pods := c.CPU, c.Memory, c.Pods
	if cpu == "" {
		cpu = "64"
	}
	if mem == "" {
		mem = "512Gi"
	}
	if pods == 0 {
		pods = 110
	}
	var errs []error
	q := func(field, s string) resource.Quantity {
		v, err := resource.ParseQuantity(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("kubetest: capacity %s %q: %w", field, s, err))
		}
		return v
	}
	list := corev1.ResourceList{
		corev1.ResourceCPU:    q("CPU", cpu),
		corev1.ResourceMemory: q("Memory", mem),
		corev1.ResourcePods:   *resource.NewQuantity(int64(pods), resource.DecimalSI),
		GPUResource:           *resource.NewQuantity(int64(c.GPUs), resource.DecimalSI),
	}
	return list, errors.Join(errs...)
}

// notReadyTaint is the taint TaintNodesByCondition admission puts on a
// new Node until a kubelet reports it Ready.
const notReadyTaint = "node.kubernetes.io/not-ready"

// CreateReadyNodes creates the nodes, then makes each schedulable as a
// kubelet would: status Ready=True with capacity and allocatable capc, and
// no node.kubernetes.io/not-ready taint. Schedulers then place pods on
// them (there is no kubelet: pods are bound, never run).
func (c *Cluster) CreateReadyNodes(ctx context.Context, nodes []*corev1.Node, capc Capacity) error {
	res, err := capc.resources()
	if err != nil {
		return err
	}
	if err := c.CreateNodes(ctx, nodes, 8); err != nil {
		return err
	}
	for _, n := range nodes {
		if err := c.makeReady(ctx, n.Name, res); err != nil {
			return err
		}
	}
	return nil
}

// makeReady sets the node's status, then removes the not-ready taint,
// retrying on conflicts (the node lifecycle has no controller here, but
// other writers, such as a labelling engine, may race).
func (c *Cluster) makeReady(ctx context.Context, name string, res corev1.ResourceList) error {
	nodes := c.core.CoreV1().Nodes()
	now := metav1.NewTime(time.Now())
	err := retryConflict(ctx, func() error {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Capacity, n.Status.Allocatable = res.DeepCopy(), res.DeepCopy()
		n.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now,
		}}
		n.Status.Phase = corev1.NodeRunning
		_, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("kubetest: node %s status: %w", name, err)
	}
	err = retryConflict(ctx, func() error {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		kept := slices.DeleteFunc(slices.Clone(n.Spec.Taints), func(t corev1.Taint) bool { return t.Key == notReadyTaint })
		if len(kept) == len(n.Spec.Taints) {
			return nil
		}
		n.Spec.Taints = kept
		_, err = nodes.Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("kubetest: node %s taint %s: %w", name, notReadyTaint, err)
	}
	return nil
}

// retryConflict runs f until it returns something other than a conflict.
func retryConflict(ctx context.Context, f func() error) error {
	for {
		err := f()
		if !apierrors.IsConflict(err) {
			return err
		}
		if ctx.Err() != nil {
			return errors.Join(err, ctx.Err())
		}
	}
}

// WorkNamespace creates a namespace unique to the test with the default
// ServiceAccount that pods need (there is no controller manager to make
// it), and returns its name.
func (c *Cluster) WorkNamespace(ctx context.Context, t testing.TB) string {
	t.Helper()
	ns := c.Namespace(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	if _, err := c.core.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create ServiceAccount %s/default: %v", ns, err)
	}
	return ns
}

// GPUPod is a pod asking for gpus GPUs and a little CPU and memory, with
// nodeSelector sel; it never runs (there is no kubelet).
func GPUPod(namespace, name string, gpus int, sel map[string]string) *corev1.Pod {
	req := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1"),
		corev1.ResourceMemory: resource.MustParse("1Gi"),
		GPUResource:           *resource.NewQuantity(int64(gpus), resource.DecimalSI),
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			NodeSelector:  sel,
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: req, Limits: corev1.ResourceList{GPUResource: req[GPUResource]}},
			}},
		},
	}
}

// BindPods creates, for each node, a pod already bound to it (spec.nodeName
// set) that takes gpus GPUs: the load a scheduler must place around.
func (c *Cluster) BindPods(ctx context.Context, namespace string, nodes []string, gpus int) error {
	for _, node := range nodes {
		p := GPUPod(namespace, "busy-"+node, gpus, nil)
		p.Spec.NodeName = node
		if _, err := c.core.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("kubetest: bound pod on %s: %w", node, err)
		}
	}
	return nil
}

// Poll calls cond every interval until it returns true or an error, or
// timeout passes; the error then says what was awaited.
func Poll(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, cond)
	if err != nil {
		return fmt.Errorf("kubetest: waiting for %s: %w", what, err)
	}
	return nil
}
