package service_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/service"
)

// TestElectorHandover runs two electors on one Lease of the real
// apiserver: one leads and the other follows it; the leader's end
// releases the Lease (holder empty), the follower takes it over (one
// transition), and the two never lead at once.
func TestElectorHandover(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	ns := c.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := func(id string) service.ElectorConfig {
		return service.ElectorConfig{Namespace: ns, Name: "handover", Identity: id,
			LeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second, RetryPeriod: 200 * time.Millisecond}
	}
	var leaders atomic.Int32
	var mu sync.Mutex
	var led, followed []string // who led, and whom b followed, in order
	leading := make(chan string, 4)
	run := func(ctx context.Context, id string) <-chan error {
		el, err := service.NewElector(c.Kube(), cfg(id), nil)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			done <- el.Run(ctx, func(lctx context.Context) {
				if n := leaders.Add(1); n != 1 {
					t.Errorf("%d replicas lead at once", n)
				}
				mu.Lock()
				led = append(led, id)
				mu.Unlock()
				leading <- id
				<-lctx.Done()
				leaders.Add(-1)
			}, func(fctx context.Context, leader string) {
				mu.Lock()
				followed = append(followed, id+"->"+leader)
				mu.Unlock()
				<-fctx.Done()
			})
		}()
		return done
	}
	actx, stopA := context.WithCancel(ctx)
	aDone := run(actx, "a")
	if id := <-leading; id != "a" {
		t.Fatalf("first leader %q, want a", id)
	}
	bDone := run(ctx, "b")
	lease := func() (holder string, transitions int32) {
		l, err := c.Core().CoordinationV1().Leases(ns).Get(context.Background(), "handover", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		if l.Spec.LeaseTransitions != nil {
			transitions = *l.Spec.LeaseTransitions
		}
		return holder, transitions
	}
	// b follows a while a renews: wait until b has read the Lease once.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := len(followed)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b never followed a")
		}
	}
	if h, n := lease(); h != "a" || n != 0 {
		t.Errorf("while a leads: holder %q, %d transitions; want a, 0", h, n)
	}

	stopA()
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	if h, _ := lease(); h == "a" {
		t.Error("a still holds the Lease after it stopped")
	}
	// a released the Lease, so b takes it long before the 30 s it would
	// otherwise have to wait for it to expire.
	select {
	case id := <-leading:
		if id != "b" {
			t.Fatalf("second leader %q, want b", id)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("b did not take over the released Lease")
	}
	if h, n := lease(); h != "b" || n != 1 {
		t.Errorf("after the handover: holder %q, %d transitions; want b, 1", h, n)
	}
	cancel()
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	if h, _ := lease(); h != "" {
		t.Errorf("after b stopped: holder %q, want the Lease released", h)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(led) != 2 || len(followed) != 1 || followed[0] != "b->a" {
		t.Errorf("led %v, followed %v; want [a b] and [b->a]", led, followed)
	}
}
