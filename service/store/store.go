// Package store is toposcope's crash-safe persistence: topology
// snapshots with their graphs and diffs, the accepted (current) and the
// refused (pending) snapshot, a log of discovery runs, the results of API
// requests, node agents' reports, and the placement budgets and ledger.
// Credentials are never given to it.
//
// It lives in a bbolt file (Open; one process) or in a PostgreSQL or
// MariaDB database that several replicas share (OpenDatabase). Both hold
// the same buckets of keys (IDs are 8-byte big-endian sequences):
//
//	meta       "schema" -> "1"; "current", "pending" -> snapshot ID
//	snapshots  ID -> Snapshot (JSON)
//	graphs     ID -> gzip of the graph's JSON
//	diffs      ID -> Diff against the snapshot's parent (JSON)
//	runs       ID -> Run (JSON)
//	results    request ID -> Result (JSON)
//	bodies     request ID -> the engine output of a finished request
//	agents     node name -> the node agent's latest AgentReport (JSON)
//	placement  "budgets" -> placement.Budgets (JSON)
//	ledger     sequence -> placement.Record (JSON)
package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// schemaVersion is written to a new store and checked on open.
const schemaVersion = "1"

// Bucket and key names.
var (
	bMeta      = []byte("meta")
	bSnapshots = []byte("snapshots")
	bGraphs    = []byte("graphs")
	bDiffs     = []byte("diffs")
	bRuns      = []byte("runs")
	bResults   = []byte("results")
	bBodies    = []byte("bodies")

	kSchema  = []byte("schema")
	kCurrent = []byte("current")
	kPending = []byte("pending")
)

// ErrNotFound is wrapped when a snapshot, diff or result does not exist.
var ErrNotFound = errors.New("not found")

// ErrNotPending is wrapped when a snapshot that is not the pending
// (refused) one is asked to be accepted.
var ErrNotPending = errors.New("snapshot is not pending")

// ErrSchema is wrapped when the file was written by an incompatible
// version of toposcope.
var ErrSchema = errors.New("unsupported store schema")

// ErrInUse is wrapped when another process holds the store.
var ErrInUse = errors.New("in use")

// ErrFull is wrapped when a write failed because the store's file
// system or database is full (or the quota spent).
var ErrFull = errors.New("store full")

// ErrReadOnly is wrapped when the database refuses writes (a read-only
// replica, or read-only mode); reads go on.
var ErrReadOnly = errors.New("store is read-only")

// ErrUnavailable is wrapped when the database cannot be reached or
// failed the transaction for a passing reason; the request may be
// retried.
var ErrUnavailable = errors.New("store unavailable")

// ErrCorrupt is wrapped when the file is not a readable store.
var ErrCorrupt = errors.New("corrupt store file")

// Options tune Open.
type Options struct {
	// LockTimeout bounds waiting for another process's lock on the file;
	// 0 means 10s.
	LockTimeout time.Duration
}

// Store is an open store. It is safe for concurrent use.
type Store struct {
	b backend
}

// Path names where the store is: its bbolt file, or the database's
// address (never a password).
func (s *Store) Path() string { return s.b.where() }

// Close closes the store. Call it once, after every user is done.
func (s *Store) Close() error {
	if err := s.b.close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// Check verifies a bbolt file's page structure, as after a crash; a
// database checks itself, and has nothing to do here.
func (s *Store) Check() error {
	if b, ok := s.b.(*boltBackend); ok {
		return b.check()
	}
	return nil
}

// view and update run fn in a transaction of the store's backend.
func (s *Store) view(ctx context.Context, fn func(txn) error) error   { return s.b.view(ctx, fn) }
func (s *Store) update(ctx context.Context, fn func(txn) error) error { return s.b.update(ctx, fn) }
