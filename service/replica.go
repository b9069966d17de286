package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/toposcope/toposcope/service/store"
)

// replicaLockPrefix names a replica's lock in the shared database.
const replicaLockPrefix = "toposcope-replica-"

// Replica is this process among the replicas of a shared store: an ID,
// and a lock of that name held in the database for as long as the
// process runs, so that another replica can tell whether the requests
// this one left pending are still being run (its lock is held) or were
// orphaned (the database freed the lock with the connection).
type Replica struct {
	// ID names the replica: its host and a random part.
	ID     string
	st     *store.Store
	lock   *store.Lock
	cancel context.CancelFunc
	done   chan struct{}
}

// JoinReplicas takes this replica's lock in the shared database and
// keeps its connection alive (checked every period; taken again if the
// database dropped it) until Leave.
func JoinReplicas(ctx context.Context, st *store.Store, period time.Duration, log *slog.Logger) (*Replica, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	r := &Replica{ID: host + "-" + hex.EncodeToString(b[:]), st: st, done: make(chan struct{})}
	lock, err := st.TryLock(ctx, replicaLockPrefix+r.ID)
	switch {
	case err != nil:
		return nil, fmt.Errorf("replica lock: %w", err)
	case lock == nil:
		return nil, fmt.Errorf("replica lock %s is held by another connection", r.ID)
	}
	r.lock = lock
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	go r.hold(hctx, period, log)
	return r, nil
}

func (r *Replica) hold(ctx context.Context, period time.Duration, log *slog.Logger) {
	defer close(r.done)
	for {
		err := r.lock.Hold(ctx, period)
		if ctx.Err() != nil {
			return
		}
		log.Warn("shared store: this replica's lock was lost; taking it again", "replica", r.ID, "err", err)
		for ctx.Err() == nil {
			if lock, err := r.st.TryLock(ctx, replicaLockPrefix+r.ID); err == nil && lock != nil {
				r.lock = lock
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(period):
			}
		}
	}
}

// Alive reports whether the replica id still holds its lock. An empty
// id (a request stored before replicas had IDs) is no live replica.
func (r *Replica) Alive(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	if id == r.ID {
		return true, nil
	}
	lock, err := r.st.TryLock(ctx, replicaLockPrefix+id)
	if err != nil || lock == nil {
		return err == nil, err
	}
	return false, lock.Release(ctx)
}

// Leave gives the replica's lock back; a lock whose connection broke is
// already free.
func (r *Replica) Leave(ctx context.Context) error {
	r.cancel()
	<-r.done
	if err := r.lock.Release(ctx); err != nil && !errors.Is(err, store.ErrUnavailable) {
		return err
	}
	return nil
}
