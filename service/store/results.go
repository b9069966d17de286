package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// State is where an API request is.
type State string

// Request states.
const (
	// StatePending means accepted and not finished.
	StatePending State = "pending"
	// StateDone means finished with an engine output.
	StateDone State = "done"
	// StateFailed means finished with an error.
	StateFailed State = "failed"
)

// Result is an API request (POST /v1/generate) and what came of it.
// Request never holds credentials.
type Result struct {
	// ID is the request ID (a hash of the canonical request).
	ID string `json:"id"`
	// State is pending, done or failed.
	State State `json:"state"`
	// Request is the canonical request without credentials, kept so that
	// a pending request can be resumed after a restart.
	Request json.RawMessage `json:"request"`
	// HadCredentials says the request carried credentials, which were not
	// stored: such a request cannot be resumed after a restart.
	HadCredentials bool      `json:"hadCredentials,omitempty"`
	SubmittedAt    time.Time `json:"submittedAt"`
	FinishedAt     time.Time `json:"finishedAt,omitzero"`
	// ContentType is the media type of the body of a done request.
	ContentType string `json:"contentType,omitempty"`
	// Size is the length of the body.
	Size int `json:"size,omitempty"`
	// ErrKind classifies the error of a failed request (see
	// service.KindOf); ErrField names the offending field, if any.
	ErrKind    string `json:"errKind,omitempty"`
	ErrMessage string `json:"errMessage,omitempty"`
	ErrField   string `json:"errField,omitempty"`
	// Owner is the replica that runs the request, on a shared store.
	Owner string `json:"owner,omitempty"`
}

// PutResult stores r and, when body is not nil, its body, replacing what
// was stored under r.ID.
func (s *Store) PutResult(ctx context.Context, r *Result, body []byte) error {
	err := s.update(ctx, func(tx txn) error {
		if err := putJSON(tx, bResults, []byte(r.ID), r); err != nil {
			return err
		}
		if body != nil {
			return tx.put(bBodies, []byte(r.ID), body)
		}
		return tx.del(bBodies, []byte(r.ID))
	})
	if err != nil {
		return fmt.Errorf("store result %s: %w", r.ID, err)
	}
	return nil
}

// Result returns the request id and its body (nil unless done).
func (s *Store) Result(ctx context.Context, id string) (*Result, []byte, error) {
	var (
		r    Result
		body []byte
	)
	err := s.view(ctx, func(tx txn) error {
		if err := getJSON(tx, bResults, []byte(id), &r); err != nil {
			return err
		}
		v, err := tx.get(bBodies, []byte(id))
		if v != nil {
			body = bytes.Clone(v)
		}
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("request %s: %w", id, err)
	}
	return &r, body, nil
}

// PendingResults returns every request still pending, as after a restart.
func (s *Store) PendingResults(ctx context.Context) ([]Result, error) {
	var out []Result
	err := s.view(ctx, func(tx txn) error {
		return scanJSON(tx, bResults, span{}, "request", strName, func(_ []byte, r *Result) error {
			if r.State == StatePending {
				out = append(out, *r)
			}
			return nil
		})
	})
	return out, err
}

// ClaimResult makes the pending request id owner to's, if it is still
// pending and from's; it reports whether it did, so that of two replicas
// taking over an orphaned request one does.
func (s *Store) ClaimResult(ctx context.Context, id, from, to string) (bool, error) {
	claimed := false
	err := s.update(ctx, func(tx txn) error {
		claimed = false
		var r Result
		switch err := getJSON(tx, bResults, []byte(id), &r); {
		case errors.Is(err, ErrNotFound):
			return nil
		case err != nil:
			return err
		}
		if r.State != StatePending || r.Owner != from {
			return nil
		}
		r.Owner, claimed = to, true
		return putJSON(tx, bResults, []byte(id), &r)
	})
	if err != nil {
		return false, fmt.Errorf("claim request %s: %w", id, err)
	}
	return claimed, nil
}
