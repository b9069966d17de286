package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/toposcope/toposcope/service/store"
)

// A replica on a shared store (store.database) keeps in memory only
// what it can check cheaply against the database: the current and the
// pending snapshot (the store's heads, polled by the refresher and read
// again before every discovery and accept), and the budgets and ledger
// (their version, read before every read of them: placement.Books). The
// scheduler extender's holds are not kept in memory at all.

// Refresh brings this replica's view up to what other replicas wrote
// to the shared store: the current and the pending snapshot, then the
// budgets and the ledger. It reports whether the topology changed.
func (s *Service) Refresh(ctx context.Context) (bool, error) {
	changed, err := s.Loop.Refresh(ctx)
	if err != nil {
		return false, err
	}
	return changed, s.Placement.Refresh(ctx)
}

// resumeEvery is how many refreshes pass between two looks for requests
// that a vanished replica left pending.
const resumeEvery = 15

// refreshEvery runs Refresh every interval until ctx ends, logging a
// failure once until the store answers again; every resumeEvery
// refreshes it takes over the requests of replicas that are gone.
func (s *Service) refreshEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for tick := 1; ; tick++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if tick%resumeEvery == 0 {
			if err := s.Requests.Resume(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("shared store: taking over orphaned requests", "err", err)
			}
		}
		changed, err := s.Refresh(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			s.log.Warn("shared store: refresh failed; serving what this replica last read", "err", err)
			failing = true
		case err == nil && failing:
			s.log.Info("shared store: refresh answers again")
			failing = false
		}
		if changed {
			st := s.Loop.State()
			s.log.Info("shared store: another replica changed the topology", "snapshot", idOf(st.Snapshot), "pending", idOf(st.Pending))
		}
	}
}

// Refresh reads the store's heads and, when another replica moved them,
// the current and the pending snapshot. It waits for a discovery or an
// accept of this replica to finish.
func (l *Loop) Refresh(ctx context.Context) (bool, error) {
	cur, pend, err := l.deps.Store.Heads(ctx)
	if err != nil {
		return false, err
	}
	if st := l.State(); idOf(st.Snapshot) == cur && idOf(st.Pending) == pend {
		return false, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refreshLocked(ctx)
}

// refreshLocked is Refresh with l.mu held. On a store of one process it
// does nothing: nobody else writes there.
func (l *Loop) refreshLocked(ctx context.Context) (bool, error) {
	if !l.deps.Store.Shared() {
		return false, nil
	}
	next, changed, err := l.readHeads(ctx, *l.State())
	if err != nil || !changed {
		return false, err
	}
	l.state.Store(&next)
	return true, nil
}

func idOf(s *store.Snapshot) uint64 {
	if s == nil {
		return 0
	}
	return s.ID
}

// sharedRoles is how a replica on a shared store comes to lead: by the
// Kubernetes Lease when kubernetes.leaderElection is on (campaign as
// kubernetesRoles made it), else by the database's lock.
func (s *Service) sharedRoles(addr net.Addr, campaign func(context.Context, func(context.Context))) func(context.Context, func(context.Context)) {
	if s.Config.Kubernetes.Enabled() && s.Config.Kubernetes.LeaderElection.Enabled {
		return campaign
	}
	host, _ := os.Hostname()
	e := &dbElection{
		st: s.Store, name: leaderLock, identity: fmt.Sprintf("%s (%s)", host, addr), retry: s.Config.Store.Database.RefreshInterval,
		refresh: s.Refresh, log: s.log.With("component", "leader-election"),
	}
	return e.run
}

// leaderLock is the name of the leader's lock in the shared database.
const leaderLock = "toposcope-leader"

// ErrNotLeading is wrapped when this replica lost the database lock
// that made it the leader.
var ErrNotLeading = errors.New("not leading")

// dbElection campaigns for the leader's lock in the shared database
// (PostgreSQL advisory lock, MariaDB GET_LOCK), for replicas without a
// Kubernetes Lease: a pair of Slurm head nodes. The lock is held on one
// connection: a leader that dies, or whose connection breaks, loses it
// (the database frees it when the connection ends), and a leader that
// cannot reach the database stops leading before another can take over.
type dbElection struct {
	st       *store.Store
	name     string
	identity string
	retry    time.Duration
	refresh  func(context.Context) (bool, error)
	log      *slog.Logger
}

// run campaigns until ctx ends: it tries the lock every retry period,
// and while it holds it runs lead with a context that ends when the lock
// is lost. Before leading it reads the shared store again, so that the
// first discovery compares with what the last leader wrote.
func (e *dbElection) run(ctx context.Context, lead func(context.Context)) {
	for ctx.Err() == nil {
		lock, err := e.st.TryLock(ctx, e.name)
		switch {
		case err != nil:
			e.log.Warn("leader election: the database lock cannot be tried", "lock", e.name, "err", err)
		case lock != nil:
			e.lead(ctx, lock, lead)
		}
		select {
		case <-ctx.Done():
		case <-time.After(e.retry):
		}
	}
}

func (e *dbElection) lead(ctx context.Context, lock *store.Lock, lead func(context.Context)) {
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		err := lock.Hold(lctx, e.retry)
		cancel(fmt.Errorf("%w: %w", ErrNotLeading, err))
	}()
	if _, err := e.refresh(lctx); err != nil {
		e.log.Warn("leader election: reading the shared store before leading", "err", err)
	}
	e.log.Info("leading: this replica discovers and publishes", "identity", e.identity, "lock", e.name)
	lead(lctx)
	cancel(nil)
	if err := lock.Release(context.WithoutCancel(ctx)); err != nil {
		e.log.Warn("leader election: releasing the database lock", "err", err)
	}
	e.log.Info("not leading", "identity", e.identity, "why", context.Cause(lctx))
}
