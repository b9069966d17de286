package placement

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/toposcope/toposcope/internal/registry"
)

// SourceFactory builds one kind of ledger source from its YAML
// parameters; the registry lists every one (internal/registry has the
// meaning of each field; Example is empty when every source of the kind
// needs an outside service, a Kubernetes cluster).
type SourceFactory = registry.Factory[Source, SourceDeps]

// SourceDeps are what a source is built with.
type SourceDeps struct {
	// Logger receives the source's warnings.
	Logger *slog.Logger
}

// Syncer reads ledger sources into a store at an interval.
type Syncer struct {
	store    *Books
	sources  []Source
	interval time.Duration
	now      func() time.Time
	log      *slog.Logger
}

// NewSyncer returns a syncer of sources into store every interval; now
// is the clock.
func NewSyncer(store *Books, sources []Source, interval time.Duration, now func() time.Time, log *slog.Logger) (*Syncer, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("%w: sync interval must be positive, got %v", ErrInvalid, interval)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Syncer{store: store, sources: sources, interval: interval, now: now, log: log}, nil
}

// SyncOnce reads every source once. A source that fails keeps its
// previous live records (a partial answer ends no work); the errors of
// all failed sources are returned together.
func (s *Syncer) SyncOnce(ctx context.Context) error {
	var errs []error
	for _, src := range s.sources {
		now := s.now()
		recs, err := src.Records(ctx, now)
		if err == nil {
			err = s.store.Sync(ctx, src.Name(), recs, now)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("ledger source %s: %w", src.Name(), err))
			continue
		}
		s.log.Debug("ledger source synced", "source", src.Name(), "records", len(recs))
	}
	return errors.Join(errs...)
}

// Run syncs at once and then every interval until ctx ends, logging
// failures.
func (s *Syncer) Run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		if err := s.SyncOnce(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("ledger sync failed; the previous records of the failed sources are kept", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
