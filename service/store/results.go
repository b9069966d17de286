package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
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
}

// PutResult stores r and, when body is not nil, its body, replacing what
// was stored under r.ID.
func (s *Store) PutResult(r *Result, body []byte) error {
	err := s.update(func(tx *bolt.Tx) error {
		if err := putJSON(tx.Bucket(bResults), []byte(r.ID), r); err != nil {
			return err
		}
		if body != nil {
			return tx.Bucket(bBodies).Put([]byte(r.ID), body)
		}
		return tx.Bucket(bBodies).Delete([]byte(r.ID))
	})
	if err != nil {
		return fmt.Errorf("store result %s: %w", r.ID, err)
	}
	return nil
}

// Result returns the request id and its body (nil unless done).
func (s *Store) Result(id string) (*Result, []byte, error) {
	var (
		r    Result
		body []byte
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		if err := getJSON(tx.Bucket(bResults), []byte(id), &r); err != nil {
			return err
		}
		if v := tx.Bucket(bBodies).Get([]byte(id)); v != nil {
			body = bytes.Clone(v)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("request %s: %w", id, err)
	}
	return &r, body, nil
}

// PendingResults returns every request still pending, as after a restart.
func (s *Store) PendingResults() ([]Result, error) {
	var out []Result
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bResults).ForEach(func(k, v []byte) error {
			var r Result
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("request %s: %w", k, err)
			}
			if r.State == StatePending {
				out = append(out, r)
			}
			return nil
		})
	})
	return out, err
}
