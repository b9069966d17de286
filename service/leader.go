package service

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/toposcope/toposcope/internal/kubeclient"
)

// ElectorConfig configures an Elector.
type ElectorConfig struct {
	// Namespace and Name locate the coordination.k8s.io Lease.
	Namespace, Name string
	// Identity is this replica's holder identity; toposcope uses the
	// replica's advertised API URL, so that followers know where to read
	// the leader's topology.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are the timings of
	// Kubernetes leader election (LeaseDuration > RenewDeadline >
	// 1.2 × RetryPeriod), with client-go's meaning: a Lease not renewed
	// for LeaseDuration may be taken over; the leader stops leading when
	// it could not renew for RenewDeadline; every attempt is RetryPeriod
	// apart.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Elector campaigns for a Lease and runs a lead function while this
// replica holds it and a follow function, given the leader's identity,
// while another replica does.
type Elector struct {
	core *kubeclient.Core
	cfg  ElectorConfig
	log  *slog.Logger
}

// newElector returns an Elector; log may be nil.
func newElector(core *kubeclient.Core, cfg ElectorConfig, log *slog.Logger) (*Elector, error) {
	if cfg.Identity == "" || cfg.Namespace == "" || cfg.Name == "" {
		return nil, errors.New("leader election: namespace, name and identity are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Elector{core: core, cfg: cfg, log: log.With("component", "leader-election", "lease", cfg.Namespace+"/"+cfg.Name)}, nil
}

// Run campaigns until ctx is done. lead runs while this replica leads,
// with a context that ends when it stops leading; Run waits for lead to
// return before a new lead starts, so two lead calls never overlap in
// one process, and before it returns itself. follow runs while another replica leads, with a context
// that ends when the leader changes or this replica takes over. On
// ctx's end the Lease is released, so that a follower takes over at once.
func (e *Elector) Run(ctx context.Context, lead func(context.Context), follow func(ctx context.Context, leader string)) error {
	f := &followers{run: follow}
	defer f.stop()
	c := &campaign{e: e, leases: e.core.Leases(e.cfg.Namespace), onNewLeader: func(id string) {
		if id == e.cfg.Identity {
			return
		}
		e.log.Info("following", "leader", id)
		f.start(ctx, id)
	}}
	for ctx.Err() == nil {
		if !c.acquire(ctx) {
			break
		}
		f.stop()
		e.log.Info("leading: this replica discovers and publishes", "identity", e.cfg.Identity)
		lctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			lead(lctx)
		}()
		c.renew(lctx)
		cancel()
		<-done
		if ctx.Err() != nil {
			c.release()
		}
		e.log.Info("not leading", "identity", e.cfg.Identity)
	}
	return nil
}

// followers runs at most one follow function at a time.
type followers struct {
	run    func(context.Context, string)
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	leader string
}

// start follows leader, stopping whatever followed another one.
func (f *followers) start(ctx context.Context, leader string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancel != nil && f.leader == leader {
		return
	}
	f.stopLocked()
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	f.cancel, f.done, f.leader = cancel, done, leader
	go func() {
		defer close(done)
		f.run(fctx, leader)
	}()
}

func (f *followers) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopLocked()
}

func (f *followers) stopLocked() {
	if f.cancel == nil {
		return
	}
	f.cancel()
	<-f.done
	f.cancel, f.done, f.leader = nil, nil, ""
}
