package service

import (
	"context"
	"math/rand/v2"
	"reflect"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/internal/kubeclient"
)

// leases is what a campaign needs of a Leases client.
type leases interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error)
	Create(ctx context.Context, obj *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error)
	Update(ctx context.Context, obj *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error)
}

// campaign holds one replica's view of the Lease, with the rules of
// client-go's leader election: a holder's Lease is valid for its
// leaseDurationSeconds after this replica last saw it change (this
// replica's clock, never the holder's timestamps); the holder renews it
// every RetryPeriod and steps down when it could not for RenewDeadline;
// every write is optimistic (resourceVersion), so two replicas never both
// win one term.
type campaign struct {
	e      *Elector
	leases leases
	// lease is the Lease as last read or written; observedAt is when its
	// holder or renew time last changed.
	lease      *coordinationv1.Lease
	observedAt time.Time
	// reported is the last holder given to onNewLeader.
	reported    string
	onNewLeader func(id string)
}

var _ leases = kubeclient.Resource[coordinationv1.Lease, *coordinationv1.Lease, coordinationv1.LeaseList, *coordinationv1.LeaseList]{}

// holder is the holder identity of the Lease last seen.
func (c *campaign) holder() string {
	if c.lease == nil || c.lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *c.lease.Spec.HolderIdentity
}

func (c *campaign) leading() bool { return c.holder() == c.e.cfg.Identity }

// valid says whether the Lease last seen is still held at now.
func (c *campaign) valid(now time.Time) bool {
	if c.lease == nil || c.lease.Spec.LeaseDurationSeconds == nil {
		return false
	}
	return c.observedAt.Add(time.Duration(*c.lease.Spec.LeaseDurationSeconds) * time.Second).After(now)
}

// acquire tries every RetryPeriod (jittered by up to 1.2 times) until this
// replica holds the Lease; false when ctx ended first.
func (c *campaign) acquire(ctx context.Context) bool {
	for {
		ok := c.tryAcquireOrRenew(ctx)
		if h := c.holder(); h != c.reported && !ok {
			c.reported = h
			if h != "" {
				c.onNewLeader(h)
			}
		}
		if ok {
			c.reported = c.e.cfg.Identity
			return true
		}
		wait := c.e.cfg.RetryPeriod + time.Duration(rand.Float64()*1.2*float64(c.e.cfg.RetryPeriod))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
}

// renew keeps the Lease until ctx ends or a renewal fails for
// RenewDeadline.
func (c *campaign) renew(ctx context.Context) {
	tick := time.NewTicker(c.e.cfg.RetryPeriod)
	defer tick.Stop()
	deadline := time.Now().Add(c.e.cfg.RenewDeadline)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if c.tryAcquireOrRenew(ctx) {
			deadline = time.Now().Add(c.e.cfg.RenewDeadline)
			continue
		}
		if !c.leading() || !time.Now().Before(deadline) {
			c.e.log.Warn("lost the Lease", "holder", c.holder())
			return
		}
	}
}

// tryAcquireOrRenew makes one attempt to take or keep the Lease.
func (c *campaign) tryAcquireOrRenew(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, c.e.cfg.RenewDeadline)
	defer cancel()
	now := time.Now()
	if c.leading() && c.valid(now) {
		// Renew with the Lease last written: one request when no one
		// else wrote it since.
		if c.write(ctx, c.term(c.lease, now, true)) {
			return true
		}
	}
	cur, err := c.leases.Get(ctx, c.e.cfg.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		l := c.term(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: c.e.cfg.Namespace, Name: c.e.cfg.Name}}, now, false)
		made, err := c.leases.Create(ctx, l, metav1.CreateOptions{FieldManager: kubeclient.FieldManager})
		if err != nil {
			c.e.log.Debug("create the Lease", "err", err)
			return false
		}
		c.seen(made, true)
		return true
	case err != nil:
		c.e.log.Warn("read the Lease", "err", err)
		return false
	}
	c.seen(cur, false)
	if c.holder() != "" && c.valid(now) && !c.leading() {
		return false // held by another replica
	}
	return c.write(ctx, c.term(cur, now, c.leading()))
}

// term returns l held by this replica from now: renewed when this replica
// already holds it, otherwise acquired (one more transition).
func (c *campaign) term(l *coordinationv1.Lease, now time.Time, renewing bool) *coordinationv1.Lease {
	out := l.DeepCopy()
	id, secs, at := c.e.cfg.Identity, int32(c.e.cfg.LeaseDuration/time.Second), metav1.NewMicroTime(now)
	out.Spec.HolderIdentity, out.Spec.LeaseDurationSeconds, out.Spec.RenewTime = &id, &secs, &at
	if !renewing {
		out.Spec.AcquireTime = &at
		if l.ResourceVersion != "" {
			n := int32(1)
			if l.Spec.LeaseTransitions != nil {
				n += *l.Spec.LeaseTransitions
			}
			out.Spec.LeaseTransitions = &n
		} else {
			zero := int32(0)
			out.Spec.LeaseTransitions = &zero
		}
	}
	return out
}

// write updates the Lease to l; false when the server refused (another
// replica wrote it first, or it failed).
func (c *campaign) write(ctx context.Context, l *coordinationv1.Lease) bool {
	out, err := c.leases.Update(ctx, l, metav1.UpdateOptions{FieldManager: kubeclient.FieldManager})
	if err != nil {
		c.e.log.Debug("write the Lease", "err", err)
		return false
	}
	c.seen(out, true)
	return true
}

// seen records l as the Lease last seen; its observation time moves when
// its spec (holder, renew time, duration) changed, or when this replica
// wrote it.
func (c *campaign) seen(l *coordinationv1.Lease, wrote bool) {
	changed := wrote || c.lease == nil || !reflect.DeepEqual(l.Spec, c.lease.Spec)
	c.lease = l
	if changed {
		c.observedAt = time.Now()
	}
}

// release gives the Lease up at once when this replica holds it, so
// that a follower need not wait for it to expire.
func (c *campaign) release() {
	if !c.leading() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.e.cfg.RenewDeadline)
	defer cancel()
	l := c.lease.DeepCopy()
	none, one, at := "", int32(1), metav1.NewMicroTime(time.Now())
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime, l.Spec.AcquireTime = &none, &one, &at, &at
	if _, err := c.leases.Update(ctx, l, metav1.UpdateOptions{FieldManager: kubeclient.FieldManager}); err != nil {
		c.e.log.Warn("release the Lease", "err", err)
		return
	}
	c.lease = l
}
