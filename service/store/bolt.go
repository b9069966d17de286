package store

import (
	"bytes"
	"context"
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

// boltBackend is a store in a bbolt file, held by one process.
type boltBackend struct {
	db   *bolt.DB
	path string
}

// Open opens (creating if needed) the store in the bbolt file at path,
// and its directory.
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
	b := &boltBackend{db: db, path: path}
	s := &Store{b: b}
	if err := b.init(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := writePID(pidFile(path)); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// init makes every bucket and checks the schema.
func (b *boltBackend) init() error {
	return b.full(b.db.Update(func(tx *bolt.Tx) error {
		for _, name := range buckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("bucket %s: %w", name, err)
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
	}))
}

func (b *boltBackend) view(ctx context.Context, fn func(txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.db.View(func(tx *bolt.Tx) error { return fn(boltTxn{tx}) })
}

func (b *boltBackend) update(ctx context.Context, fn func(txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.full(b.db.Update(func(tx *bolt.Tx) error { return fn(boltTxn{tx}) }))
}

func (b *boltBackend) where() string { return b.path }

// full wraps err with ErrFull, naming the file, when it says the disk
// is full.
func (b *boltBackend) full(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %s: %w", ErrFull, b.path, err)
	}
	return err
}

func (b *boltBackend) close() error {
	if data, err := os.ReadFile(pidFile(b.path)); err == nil && strings.TrimSpace(string(data)) == strconv.Itoa(os.Getpid()) {
		_ = os.Remove(pidFile(b.path))
	}
	return b.db.Close()
}

// check verifies the file's page structure, as after a crash.
func (b *boltBackend) check() error {
	return b.db.View(func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
}

// boltTxn is a txn on a bbolt transaction; every bucket exists (init
// made them).
type boltTxn struct{ tx *bolt.Tx }

func (t boltTxn) bucket(name []byte) (*bolt.Bucket, error) {
	if b := t.tx.Bucket(name); b != nil {
		return b, nil
	}
	return nil, fmt.Errorf("bucket %s is missing", name)
}

func (t boltTxn) get(bucket, k []byte) ([]byte, error) {
	b, err := t.bucket(bucket)
	if err != nil {
		return nil, err
	}
	return b.Get(k), nil
}

func (t boltTxn) put(bucket, k, v []byte) error {
	b, err := t.bucket(bucket)
	if err != nil {
		return err
	}
	return b.Put(k, v)
}

func (t boltTxn) del(bucket, k []byte) error {
	b, err := t.bucket(bucket)
	if err != nil {
		return err
	}
	return b.Delete(k)
}

func (t boltTxn) nextSeq(bucket []byte) (uint64, error) {
	b, err := t.bucket(bucket)
	if err != nil {
		return 0, err
	}
	return b.NextSequence()
}

func (t boltTxn) nextSeqs(bucket []byte, n int) (uint64, error) {
	b, err := t.bucket(bucket)
	if err != nil {
		return 0, err
	}
	first := b.Sequence() + 1
	return first, b.SetSequence(b.Sequence() + uint64(n))
}

func (t boltTxn) putMany(bucket []byte, keys, vals [][]byte) error {
	b, err := t.bucket(bucket)
	if err != nil {
		return err
	}
	for i := range keys {
		if err := b.Put(keys[i], vals[i]); err != nil {
			return err
		}
	}
	return nil
}

func (t boltTxn) seq(bucket []byte) (uint64, error) {
	b, err := t.bucket(bucket)
	if err != nil {
		return 0, err
	}
	return b.Sequence(), nil
}

func (t boltTxn) setSeq(bucket []byte, n uint64) error {
	b, err := t.bucket(bucket)
	if err != nil {
		return err
	}
	return b.SetSequence(n)
}

func (t boltTxn) count(bucket []byte) (int, error) {
	b, err := t.bucket(bucket)
	if err != nil {
		return 0, err
	}
	return b.Stats().KeyN, nil
}

func (t boltTxn) scan(bucket []byte, sp span, fn func(k, v []byte) error) error {
	b, err := t.bucket(bucket)
	if err != nil {
		return err
	}
	c := b.Cursor()
	var k, v []byte
	next := c.Next
	switch {
	case sp.reverse:
		next = c.Prev
		if sp.past == nil {
			k, v = c.Last()
		} else {
			c.Seek(sp.past) // the first key at or after past; the one before it is below
			k, v = c.Prev()
			if k == nil { // past is beyond the last key
				k, v = c.Last()
				for k != nil && bytes.Compare(k, sp.past) >= 0 {
					k, v = c.Prev()
				}
			}
		}
	case sp.past != nil:
		k, v = c.Seek(sp.past)
		if k != nil && bytes.Equal(k, sp.past) {
			k, v = c.Next()
		}
	default:
		k, v = c.First()
	}
	for n := 0; k != nil && (sp.limit == 0 || n < sp.limit); k, v = next() {
		if err := fn(k, v); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
		n++
	}
	return nil
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
