package store

import (
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Database says how to reach a shared store in a SQL database.
type Database struct {
	// Driver is "postgres" (PostgreSQL) or "mysql" (MariaDB, MySQL).
	Driver string
	// DSN is the data source name: a postgres:// URL or key=value
	// string, or a MySQL DSN (user:password@tcp(host:port)/db). It holds
	// the password: it is never logged, echoed or put in an error.
	DSN string
	// TLS, when set, is used for the connection in place of what the DSN
	// says of TLS.
	TLS *tls.Config
	// MaxConns bounds the open connections (0: 10).
	MaxConns int
	// OpTimeout bounds each transaction, retries included (0: 10s), so
	// that a database that stopped answering fails a request instead of
	// holding it.
	OpTimeout time.Duration
	// NoMigrate refuses a database whose schema is older than this
	// toposcope's instead of migrating it (the operator then runs
	// `toposcope store migrate`).
	NoMigrate bool
}

// sqlBackend is a store in a SQL database: every bucket's keys in one
// table, each bucket's sequence in another.
type sqlBackend struct {
	db        *sql.DB
	d         dialect
	addr      string // user@host/db, for an operator
	opTimeout time.Duration
}

// OpenDatabase connects to the database, checks (and, unless
// NoMigrate, migrates) its schema, and returns a Store on it that every
// replica may open at once.
func OpenDatabase(ctx context.Context, cfg Database) (*Store, error) {
	b, err := connect(cfg)
	if err != nil {
		return nil, err
	}
	s := &Store{b: b}
	if err := b.ready(ctx, !cfg.NoMigrate); err != nil {
		_ = b.db.Close()
		return nil, fmt.Errorf("open store %s: %w", b.addr, err)
	}
	return s, nil
}

// connect opens the connection pool, without a round trip.
func connect(cfg Database) (*sqlBackend, error) {
	d, ok := dialects[cfg.Driver]
	if !ok {
		return nil, fmt.Errorf("store database: driver %q: want postgres or mysql", cfg.Driver)
	}
	db, addr, err := d.open(cfg.DSN, cfg.TLS)
	if err != nil {
		return nil, fmt.Errorf("store database (%s): %w", cfg.Driver, err)
	}
	maxConns := cfg.MaxConns
	if maxConns <= 0 {
		maxConns = 10
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	op := cfg.OpTimeout
	if op <= 0 {
		op = 10 * time.Second
	}
	return &sqlBackend{db: db, d: d, addr: addr, opTimeout: op}, nil
}

func (b *sqlBackend) where() string { return b.addr }
func (b *sqlBackend) close() error  { return b.db.Close() }

func (b *sqlBackend) view(ctx context.Context, fn func(txn) error) error {
	return b.run(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}, fn)
}

func (b *sqlBackend) update(ctx context.Context, fn func(txn) error) error {
	return b.run(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable}, fn)
}

// maxAttempts bounds the tries of a transaction the database aborted
// for a conflict with another replica's.
const maxAttempts = 8

// run runs fn in a transaction, again when the database aborted it for
// a serialization conflict or a deadlock, within the operation timeout.
func (b *sqlBackend) run(ctx context.Context, opts *sql.TxOptions, fn func(txn) error) error {
	ctx, cancel := context.WithTimeout(ctx, b.opTimeout)
	defer cancel()
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		err = b.once(ctx, opts, fn)
		if err == nil || !b.d.conflict(err) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt*attempt) * 5 * time.Millisecond):
		}
	}
	return b.classify(ctx, err)
}

func (b *sqlBackend) once(ctx context.Context, opts *sql.TxOptions, fn func(txn) error) error {
	tx, err := b.db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	if err := fn(&sqlTxn{ctx: ctx, tx: tx, d: b.d}); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// classify wraps a database's error with the sentinel a caller acts on:
// ErrFull, ErrReadOnly or ErrUnavailable, naming the database; errors of
// the store's own (ErrNotFound, ErrNotPending...) pass as they are.
func (b *sqlBackend) classify(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrNotPending), errors.Is(err, ErrCorrupt):
		return err
	}
	switch kind := b.d.kind(err); {
	case kind != nil:
		return fmt.Errorf("%w: %s: %w", kind, b.addr, err)
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %s did not answer in %s: %w", ErrUnavailable, b.addr, b.opTimeout, err)
	}
	return err
}

// sqlTxn is a txn on a database transaction.
type sqlTxn struct {
	ctx context.Context
	tx  *sql.Tx
	d   dialect
}

func (t *sqlTxn) get(bucket, k []byte) ([]byte, error) {
	var v []byte
	err := t.tx.QueryRowContext(t.ctx, t.d.q.get, string(bucket), k).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err == nil && v == nil {
		v = []byte{}
	}
	return v, err
}

func (t *sqlTxn) put(bucket, k, v []byte) error {
	if len(k) > maxKey {
		return fmt.Errorf("key of %d bytes in %s: at most %d", len(k), bucket, maxKey)
	}
	if v == nil {
		v = []byte{}
	}
	_, err := t.tx.ExecContext(t.ctx, t.d.q.put, string(bucket), k, v)
	return err
}

func (t *sqlTxn) del(bucket, k []byte) error {
	_, err := t.tx.ExecContext(t.ctx, t.d.q.del, string(bucket), k)
	return err
}

func (t *sqlTxn) nextSeq(bucket []byte) (uint64, error) {
	return t.d.addSeq(t.ctx, t.tx, string(bucket), 1)
}

func (t *sqlTxn) nextSeqs(bucket []byte, n int) (uint64, error) {
	last, err := t.d.addSeq(t.ctx, t.tx, string(bucket), uint64(n))
	return last - uint64(n) + 1, err
}

// putRows is the most rows one INSERT of putMany carries.
const putRows = 500

func (t *sqlTxn) putMany(bucket []byte, keys, vals [][]byte) error {
	keys, vals = lastOfEach(keys, vals) // one statement may not touch a row twice
	for start := 0; start < len(keys); start += putRows {
		end := min(start+putRows, len(keys))
		args := make([]any, 0, 3*(end-start))
		for i := start; i < end; i++ {
			if len(keys[i]) > maxKey {
				return fmt.Errorf("key of %d bytes in %s: at most %d", len(keys[i]), bucket, maxKey)
			}
			v := vals[i]
			if v == nil {
				v = []byte{}
			}
			args = append(args, string(bucket), keys[i], v)
		}
		if _, err := t.tx.ExecContext(t.ctx, t.d.putRows(end-start), args...); err != nil {
			return err
		}
	}
	return nil
}

func (t *sqlTxn) seq(bucket []byte) (uint64, error) {
	var n uint64
	err := t.tx.QueryRowContext(t.ctx, t.d.q.seq, string(bucket)).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

func (t *sqlTxn) setSeq(bucket []byte, n uint64) error {
	_, err := t.tx.ExecContext(t.ctx, t.d.q.setSeq, string(bucket), n)
	return err
}

func (t *sqlTxn) count(bucket []byte) (int, error) {
	var n int
	err := t.tx.QueryRowContext(t.ctx, t.d.q.count, string(bucket)).Scan(&n)
	return n, err
}

// scan streams the span's rows; fn must not use the transaction while
// it runs (a connection reads one result at a time).
func (t *sqlTxn) scan(bucket []byte, sp span, fn func(k, v []byte) error) (err error) {
	q, args := t.d.scanQuery(string(bucket), sp)
	rows, err := t.tx.QueryContext(t.ctx, q, args...)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	var k, v []byte
	for rows.Next() {
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		if err := fn(k, v); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
	}
	return rows.Err()
}

// maxKey is the longest key the table takes (MariaDB's VARBINARY(1024)).
const maxKey = 1024

// lastOfEach drops every pair whose key comes again later, as putting
// them in order would leave only the last.
func lastOfEach(keys, vals [][]byte) ([][]byte, [][]byte) {
	last := make(map[string]int, len(keys))
	for i, k := range keys {
		last[string(k)] = i
	}
	if len(last) == len(keys) {
		return keys, vals
	}
	var ks, vs [][]byte
	for i, k := range keys {
		if last[string(k)] == i {
			ks, vs = append(ks, k), append(vs, vals[i])
		}
	}
	return ks, vs
}
