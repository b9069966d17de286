package kubescheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/toposcope/toposcope/testenv/consumertest"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// allNodes makes a scheduler pass every feasible node to its filters
// and extenders (the extender's documented setting: a gang's held nodes
// must be among those it is passed); without it kube-scheduler stops
// looking after an adaptive share of the nodes (10% at 5,000).
const allNodes = "percentageOfNodesToScore: 100\n"

// BenchmarkSchedulerThroughput measures pods scheduled per second by the
// real kube-scheduler for a stream of gangs (8 pods of 8 GPUs, a whole
// node each) that fills 80% of a fat tree of 1,000 or 5,000 Ready nodes,
// in three runs of the same scheduler: its default configuration, every
// node scored (percentageOfNodesToScore: 100), and every node scored with
// toposcope's extender (served in-process, reading the pods' namespace
// every second) placing each gang. The clock runs from the first pod
// created (8 writers) to the last one bound. Run it alone, once:
//
//	go test ./consumers/kubescheduler/ -run '^$' -bench SchedulerThroughput -benchtime 1x -timeout 60m
func BenchmarkSchedulerThroughput(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			c, f, _ := setUpShape(b, consumertest.Shape{Nodes: n, NodesPerLeaf: 32, LeavesPerSpine: 16})
			bin, err := kubetest.FindScheduler()
			if err != nil {
				b.Fatal(err)
			}
			for _, variant := range []string{"default", "all-nodes", "extender"} {
				b.Run(variant, func(b *testing.B) {
					ns := c.WorkNamespace(b.Context(), b)
					o := kubetest.SchedulerOptions{Name: c.Prefix(b) + "-" + variant}
					switch variant {
					case "all-nodes":
						o.Extenders = allNodes
					case "extender":
						ts := startToposcope(b, c, f, ns)
						o.Extenders = allNodes + extenderYAML(ts.url)
					}
					s, err := c.StartSchedulerWith(b.Context(), bin, o)
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(s.Stop)
					gangs := n / 10 // 80% of the nodes, a node a pod
					var pods int
					var took time.Duration
					round := 0
					for b.Loop() {
						round++
						d, err := streamGangs(b.Context(), c, f, ns, o.Name, fmt.Sprintf("r%d", round), gangs)
						if err != nil {
							b.Fatalf("%v\n%s", err, s.Log())
						}
						pods, took = pods+gangs*8, took+d
						b.StopTimer()
						if err := deletePods(b.Context(), c, ns); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					b.ReportMetric(float64(pods)/took.Seconds(), "pods/s")
				})
			}
		})
	}
}

// streamGangs creates gangs gangs of 8 whole-node pods for scheduler,
// 8 writers at once, each gang's pods in a row, and returns the time
// from the first create to the last pod bound.
func streamGangs(ctx context.Context, c *kubetest.Cluster, f *consumertest.Fabric, ns, scheduler, round string, gangs int) (time.Duration, error) {
	const size = 8
	bound := map[string]bool{}
	w, err := watchBound(ctx, c, ns, bound)
	if err != nil {
		return 0, err
	}
	defer func() { w.Stop() }()
	start := time.Now()
	work := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for g := range work {
				for i := range size {
					p := schedulerPod(ns, fmt.Sprintf("%s-g%d-%d", round, g, i), scheduler, consumertest.GPUsPerNode, f, "team")
					p.Labels["toposcope.io/gang"] = fmt.Sprintf("%s-g%d", round, g)
					p.Annotations["toposcope.io/gang-size"] = fmt.Sprint(size)
					if _, err := c.Core().CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	go func() {
		defer close(work)
		for g := range gangs {
			select {
			case work <- g:
			case <-ctx.Done():
				return
			}
		}
	}()
	timeout := time.After(30 * time.Minute)
	restarts := 0
	for len(bound) < gangs*size {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				// The apiserver ends a watch now and then, or refuses a
				// resource version its cache has not reached: list, and
				// watch again.
				if restarts++; restarts > 1000 {
					return 0, fmt.Errorf("the watch of %s failed %d times; last: %v", ns, restarts, ev.Object)
				}
				w.Stop()
				if w, err = watchBound(ctx, c, ns, bound); err != nil {
					return 0, err
				}
				continue
			}
			if p, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type != watch.Deleted && p.Spec.NodeName != "" {
				bound[p.Name] = true
			}
		case err := <-errs:
			return 0, fmt.Errorf("create pod: %w", err)
		case <-timeout:
			return 0, fmt.Errorf("%d of %d pods bound after 30 minutes", len(bound), gangs*size)
		}
	}
	took := time.Since(start)
	wg.Wait()
	return took, nil
}

// watchBound lists the namespace's pods, notes those bound in bound, and
// watches the pods from that list on.
func watchBound(ctx context.Context, c *kubetest.Cluster, ns string, bound map[string]bool) (watch.Interface, error) {
	pods := c.Core().CoreV1().Pods(ns)
	l, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range l.Items {
		if l.Items[i].Spec.NodeName != "" {
			bound[l.Items[i].Name] = true
		}
	}
	return pods.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
}

// deletePods deletes the namespace's pods at once (grace period 0: no
// kubelet runs them) and waits until none is left.
func deletePods(ctx context.Context, c *kubetest.Cluster, ns string) error {
	pods := c.Core().CoreV1().Pods(ns)
	zero := int64(0)
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		return err
	}
	return kubetest.Poll(ctx, 5*time.Minute, "the pods of "+ns+" to be deleted", func(ctx context.Context) (bool, error) {
		l, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil && len(l.Items) == 0, err
	})
}
