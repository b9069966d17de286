// Package store is toposcope's embedded, crash-safe persistence (a bbolt
// file): topology snapshots with their graphs and diffs, the accepted
// (current) and the refused (pending) snapshot, a log of discovery runs,
// and the results of API requests. Credentials are never given to it.
//
// Layout, one bbolt bucket each (IDs are 8-byte big-endian sequences):
//
//	meta       "schema" -> "1"; "current", "pending" -> snapshot ID
//	snapshots  ID -> Snapshot (JSON)
//	graphs     ID -> gzip of the graph's JSON
//	diffs      ID -> Diff against the snapshot's parent (JSON)
//	runs       ID -> Run (JSON)
//	results    request ID -> Result (JSON)
//	bodies     request ID -> the engine output of a finished request
//	agents     node name -> the node agent's latest AgentReport (JSON)
package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
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
// system is full (or the quota spent).
var ErrFull = errors.New("store file system full")

// update runs fn in a write transaction; a write that failed for want of
// space wraps ErrFull and names the file.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	return s.full(s.db.Update(fn))
}

// full wraps err with ErrFull, naming the file, when it says the disk
// is full.
func (s *Store) full(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %s: %w", ErrFull, s.path, err)
	}
	return err
}

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
	db   *bolt.DB
	path string
}

// Open opens (creating if needed) the store at path, and its directory.
func Open(path string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 10 * time.Second
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("store directory: %w", err)
	}
	// A holder that says who it is fails the open at once; otherwise
	// (a holder finishing, a stale PID file) wait up to LockTimeout.
	db, err := openBolt(path, min(opts.LockTimeout, quickLock))
	if errors.Is(err, bolterrors.ErrTimeout) {
		if pid := holder(path); pid > 0 {
			return nil, fmt.Errorf("store %s is %w by PID %d; give this process another one with --store (or store.path in the configuration)", path, ErrInUse, pid)
		}
		db, err = openBolt(path, opts.LockTimeout)
	}
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("store %s is %w by another process (waited %s); give this process another one with --store", path, ErrInUse, opts.LockTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.init(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := writePID(pidFile(path)); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// writePID writes this process's PID to path. A symbolic link there is
// refused, not followed (O_NOFOLLOW): its target would be overwritten
// with the service's rights.
func writePID(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("PID file (a symbolic link is refused): %w", err)
	}
	_, err = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	return errors.Join(err, f.Close())
}

// quickLock is how long Open first waits for the file lock.
const quickLock = 200 * time.Millisecond

// openBolt opens the bbolt file; a file bbolt panics on (a corrupt one)
// is ErrCorrupt.
func openBolt(path string, timeout time.Duration) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("%w: %v (move it aside to start afresh)", ErrCorrupt, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if err != nil && !errors.Is(err, bolterrors.ErrTimeout) && !errors.Is(err, os.ErrPermission) && !errors.Is(err, os.ErrNotExist) {
		err = fmt.Errorf("%w: %w (move it aside to start afresh)", ErrCorrupt, err)
	}
	return db, err
}

// pidFile is where the process holding the store writes its PID.
func pidFile(path string) string { return path + ".pid" }

// holder returns the PID of the live process that wrote the store's PID
// file, or 0.
func holder(path string) int {
	data, err := os.ReadFile(pidFile(path))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return 0
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return 0
	}
	if err := p.Signal(syscall.Signal(0)); err != nil && !errors.Is(err, syscall.EPERM) {
		return 0 // no such process
	}
	return pid
}

func (s *Store) init() error {
	return s.update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bMeta, bSnapshots, bGraphs, bDiffs, bRuns, bResults, bBodies, bAgents} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("bucket %s: %w", b, err)
			}
		}
		meta := tx.Bucket(bMeta)
		switch v := meta.Get(kSchema); {
		case v == nil:
			return meta.Put(kSchema, []byte(schemaVersion))
		case string(v) != schemaVersion:
			return fmt.Errorf("schema %q, this toposcope reads %q: %w", v, schemaVersion, ErrSchema)
		}
		return nil
	})
}

// Path returns the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Close closes the file. Call it once, after every user is done.
func (s *Store) Close() error {
	if data, err := os.ReadFile(pidFile(s.path)); err == nil && strings.TrimSpace(string(data)) == strconv.Itoa(os.Getpid()) {
		_ = os.Remove(pidFile(s.path))
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// Check verifies the file's page structure, as after a crash.
func (s *Store) Check() error {
	return s.db.View(func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
}

func key(id uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, id)
}

func idOf(k []byte) uint64 {
	if len(k) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(k)
}

func putJSON(b *bolt.Bucket, k []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", k, err)
	}
	return b.Put(k, data)
}

func getJSON(b *bolt.Bucket, k []byte, v any) error {
	data := b.Get(k)
	if data == nil {
		return ErrNotFound
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}

func metaID(tx *bolt.Tx, k []byte) uint64 { return idOf(tx.Bucket(bMeta).Get(k)) }

func setMetaID(tx *bolt.Tx, k []byte, id uint64) error {
	if id == 0 {
		return tx.Bucket(bMeta).Delete(k)
	}
	return tx.Bucket(bMeta).Put(k, key(id))
}
