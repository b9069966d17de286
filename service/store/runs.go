package store

import (
	"context"
	"fmt"
	"time"
)

// Outcome is what one discovery run came to.
type Outcome string

// Run outcomes.
const (
	// OutcomePublished means the topology changed, was accepted and was
	// published (see the engine results for failures).
	OutcomePublished Outcome = "published"
	// OutcomeUnchanged means the topology was the current one.
	OutcomeUnchanged Outcome = "unchanged"
	// OutcomeRefused means the shrink guard refused the topology.
	OutcomeRefused Outcome = "refused"
	// OutcomeFailed means the discovery failed.
	OutcomeFailed Outcome = "failed"
	// OutcomePublishFailed means the topology changed and was accepted,
	// but every engine failed to publish it (see the engine results).
	OutcomePublishFailed Outcome = "publish-failed"
)

// EngineResult is how publishing to one engine went.
type EngineResult struct {
	Engine string `json:"engine"`
	// Error is the publish error; empty on success.
	Error string `json:"error,omitempty"`
	// DurationSeconds is how long the publish took.
	DurationSeconds float64 `json:"durationSeconds"`
	// Uncovered counts the nodes the engine's output leaves out.
	Uncovered int `json:"uncovered"`
	// Unsettled is set when the publish left work that a later one
	// completes (engines.Settler); the next discovery publishes again.
	Unsettled bool `json:"unsettled,omitempty"`
}

// Run records one discovery (or accept) and what came of it.
type Run struct {
	// ID is assigned when the run is stored.
	ID         uint64    `json:"id"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt"`
	Trigger    string    `json:"trigger"`
	Provider   string    `json:"provider"`
	Outcome    Outcome   `json:"outcome"`
	// Snapshot is the snapshot the run produced or compared equal to.
	Snapshot uint64 `json:"snapshot,omitempty"`
	// Error says why a run failed or was refused.
	Error string `json:"error,omitempty"`
	// Counts are the sizes of the discovered graph.
	Counts *Counts `json:"counts,omitempty"`
	// Engines lists the publish results, when something was published.
	Engines []EngineResult `json:"engines,omitempty"`
}

// AddRun stores run (assigning its ID). With clearPending it also drops
// the pending refusal (the topology recovered).
func (s *Store) AddRun(ctx context.Context, run *Run, clearPending bool) error {
	err := s.update(ctx, func(tx txn) error {
		if clearPending {
			if err := setMetaID(tx, kPending, 0); err != nil {
				return err
			}
		}
		return addRun(tx, run)
	})
	if err != nil {
		return fmt.Errorf("add run: %w", err)
	}
	return nil
}

func addRun(tx txn, run *Run) error {
	id, err := tx.nextSeq(bRuns)
	if err != nil {
		return fmt.Errorf("run id: %w", err)
	}
	run.ID = id
	return putJSON(tx, bRuns, key(id), run)
}

// Runs lists up to limit runs, newest first.
func (s *Store) Runs(ctx context.Context, limit int) ([]Run, error) {
	var out []Run
	if limit <= 0 {
		return nil, nil
	}
	err := s.view(ctx, func(tx txn) error {
		return scanJSON(tx, bRuns, span{reverse: true, limit: limit}, "run", idName, func(_ []byte, r *Run) error {
			out = append(out, *r)
			return nil
		})
	})
	return out, err
}
