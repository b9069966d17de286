package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/toposcope/toposcope/topology"
)

// Status says what became of a snapshot.
type Status string

// Snapshot statuses.
const (
	// StatusAccepted is a snapshot that was (or is) the current topology.
	StatusAccepted Status = "accepted"
	// StatusRefused is a snapshot the shrink guard refused; it becomes
	// accepted only through an operator's accept.
	StatusRefused Status = "refused"
)

// Who accepted a snapshot.
const (
	// ByDiscovery means the discovery loop accepted it.
	ByDiscovery = "discovery"
	// ByOperator means POST /v1/snapshots/{id}/accept accepted it.
	ByOperator = "operator"
)

// Counts are the sizes of a graph.
type Counts struct {
	Nodes    int `json:"nodes"`
	Switches int `json:"switches"`
	Domains  int `json:"domains"`
}

// CountsOf returns the sizes of g.
func CountsOf(g *topology.Graph) Counts {
	return Counts{Nodes: len(g.Nodes()), Switches: len(g.Switches()), Domains: len(g.Domains())}
}

// Snapshot describes one discovered topology that differed from its
// predecessor. Its graph and diff are stored beside it.
type Snapshot struct {
	// ID is assigned by AddSnapshot; IDs only grow.
	ID uint64 `json:"id"`
	// CreatedAt is when the discovery finished.
	CreatedAt time.Time `json:"createdAt"`
	// Provider is the provider name.
	Provider string `json:"provider"`
	// Trigger is what started the discovery (startup, interval, ...).
	Trigger string `json:"trigger"`
	// Status is accepted or refused.
	Status Status `json:"status"`
	// Reason says why a snapshot was refused.
	Reason string `json:"reason,omitempty"`
	// AcceptedAt and AcceptedBy record the accept.
	AcceptedAt *time.Time `json:"acceptedAt,omitempty"`
	AcceptedBy string     `json:"acceptedBy,omitempty"`
	// Digest is the SHA-256 of the graph's JSON; equal graphs, equal digests.
	Digest string `json:"digest"`
	// Counts are the graph's sizes.
	Counts Counts `json:"counts"`
	// Parent is the snapshot the diff is against (the current one when
	// this was discovered); 0 for the first.
	Parent uint64 `json:"parent,omitempty"`
	// Changes summarizes the diff against Parent.
	Changes DiffSummary `json:"changes"`
}

// AddSnapshot stores snap (assigning its ID), its graph's JSON and its
// diff, and, in the same transaction, run (assigning its ID, and setting
// run.Snapshot). An accepted snapshot becomes current and clears the
// pending one; a refused snapshot becomes pending.
func (s *Store) AddSnapshot(ctx context.Context, snap *Snapshot, graphJSON []byte, diff *Diff, run *Run) error {
	packed, err := gzipBytes(graphJSON)
	if err != nil {
		return err
	}
	err = s.update(ctx, func(tx txn) error {
		id, err := tx.nextSeq(bSnapshots)
		if err != nil {
			return fmt.Errorf("snapshot id: %w", err)
		}
		snap.ID = id
		if diff != nil {
			diff.To = id
		}
		if err := putJSON(tx, bSnapshots, key(id), snap); err != nil {
			return err
		}
		if err := tx.put(bGraphs, key(id), packed); err != nil {
			return fmt.Errorf("store graph: %w", err)
		}
		if diff != nil {
			if err := putJSON(tx, bDiffs, key(id), diff); err != nil {
				return err
			}
		}
		switch snap.Status {
		case StatusAccepted:
			err = errors.Join(setMetaID(tx, kCurrent, id), setMetaID(tx, kPending, 0))
		case StatusRefused:
			err = setMetaID(tx, kPending, id)
		}
		if err != nil {
			return fmt.Errorf("set current: %w", err)
		}
		if run != nil {
			run.Snapshot = id
			return addRun(tx, run)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add snapshot: %w", err)
	}
	return nil
}

// AcceptPending makes the pending snapshot id accepted and current, as
// an operator's accept does. It fails with ErrNotFound or ErrNotPending.
func (s *Store) AcceptPending(ctx context.Context, id uint64, at time.Time, by string) (*Snapshot, error) {
	var snap Snapshot
	err := s.update(ctx, func(tx txn) error {
		if err := getJSON(tx, bSnapshots, key(id), &snap); err != nil {
			return fmt.Errorf("snapshot %d: %w", id, err)
		}
		pending, err := metaID(tx, kPending)
		if err != nil {
			return err
		}
		if pending != id || snap.Status != StatusRefused {
			return fmt.Errorf("snapshot %d is %s: %w", id, snap.Status, ErrNotPending)
		}
		snap.Status, snap.AcceptedAt, snap.AcceptedBy = StatusAccepted, &at, by
		if err := putJSON(tx, bSnapshots, key(id), &snap); err != nil {
			return err
		}
		return errors.Join(setMetaID(tx, kCurrent, id), setMetaID(tx, kPending, 0))
	})
	if err != nil {
		return nil, err
	}
	return &snap, nil
}

// Snapshot returns the snapshot id.
func (s *Store) Snapshot(ctx context.Context, id uint64) (*Snapshot, error) {
	var snap Snapshot
	err := s.view(ctx, func(tx txn) error { return getJSON(tx, bSnapshots, key(id), &snap) })
	if err != nil {
		return nil, s.unreadable(fmt.Sprintf("snapshot %d", id), err)
	}
	return &snap, nil
}

// Heads returns the IDs of the current and the pending snapshot; 0 for
// none.
func (s *Store) Heads(ctx context.Context) (current, pending uint64, err error) {
	err = s.view(ctx, func(tx txn) error {
		var err1, err2 error
		current, err1 = metaID(tx, kCurrent)
		pending, err2 = metaID(tx, kPending)
		return errors.Join(err1, err2)
	})
	return current, pending, err
}

// Snapshots lists up to limit snapshots, newest first, older than before
// (0: from the newest).
func (s *Store) Snapshots(ctx context.Context, limit int, before uint64) ([]Snapshot, error) {
	var out []Snapshot
	sp := span{reverse: true, limit: limit}
	if before != 0 {
		sp.past = key(before)
	}
	if limit <= 0 {
		return nil, nil
	}
	err := s.view(ctx, func(tx txn) error {
		return scanJSON(tx, bSnapshots, sp, "snapshot", idName, func(_ []byte, snap *Snapshot) error {
			out = append(out, *snap)
			return nil
		})
	})
	return out, err
}

// Graph loads and rebuilds the graph of snapshot id.
func (s *Store) Graph(ctx context.Context, id uint64) (*topology.Graph, error) {
	var packed []byte
	err := s.view(ctx, func(tx txn) error {
		v, err := tx.get(bGraphs, key(id))
		if err != nil {
			return err
		}
		if v == nil {
			return ErrNotFound
		}
		packed = bytes.Clone(v) // v may be valid only inside the transaction
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("graph of snapshot %d: %w", id, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		return nil, s.unreadable(fmt.Sprintf("graph of snapshot %d", id), err)
	}
	var g topology.Graph
	if err := json.NewDecoder(zr).Decode(&g); err != nil {
		return nil, s.unreadable(fmt.Sprintf("graph of snapshot %d", id), err)
	}
	return &g, nil
}

// unreadable wraps the error of reading what: a record that is there
// but cannot be decoded is ErrCorrupt, with the hint a corrupt file
// header gets; ErrNotFound and the others stay as they are.
func (s *Store) unreadable(what string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%s: %w", what, err)
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w: %w (%s)", what, ErrCorrupt, err, s.corruptHint())
}

// Diff returns the stored diff of snapshot id against its parent.
func (s *Store) Diff(ctx context.Context, id uint64) (*Diff, error) {
	var d Diff
	err := s.view(ctx, func(tx txn) error { return getJSON(tx, bDiffs, key(id), &d) })
	if err != nil {
		return nil, fmt.Errorf("diff of snapshot %d: %w", id, err)
	}
	return &d, nil
}

func gzipBytes(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("compress graph: %w", err)
	}
	if _, err := io.Copy(zw, bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("compress graph: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress graph: %w", err)
	}
	return buf.Bytes(), nil
}

// corruptHint says what to do about a record that cannot be read.
func (s *Store) corruptHint() string {
	if _, ok := s.b.(*boltBackend); ok {
		return "move " + s.Path() + " aside to start afresh"
	}
	return "a record in " + s.Path() + " was not written by this toposcope"
}
