package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// backend is the transactional, ordered key-value storage under a
// Store: named buckets of byte keys, each with a sequence that only
// grows. bbolt is one; a SQL database (PostgreSQL, MariaDB) holding the
// same buckets in one table is the other, so every Store method is
// written once, against txn.
type backend interface {
	// view runs fn in a read-only transaction.
	view(ctx context.Context, fn func(txn) error) error
	// update runs fn in a read-write transaction: all of its writes land
	// or none. A backend may run fn more than once (a SQL database's
	// serialization failure is retried), so fn must not act outside the
	// transaction before it returns.
	update(ctx context.Context, fn func(txn) error) error
	// where names the store for an operator: a file path or a database
	// address, never a password.
	where() string
	close() error
}

// txn is one transaction of a backend.
type txn interface {
	// get returns the value of key, or nil when it is absent. The value
	// may be valid only until the transaction ends.
	get(bucket, key []byte) ([]byte, error)
	put(bucket, key, value []byte) error
	// del deletes key; an absent key is no error.
	del(bucket, key []byte) error
	// nextSeq returns the bucket's next sequence number, from 1.
	nextSeq(bucket []byte) (uint64, error)
	// nextSeqs takes the bucket's next n sequence numbers and returns
	// the first.
	nextSeqs(bucket []byte, n int) (uint64, error)
	// putMany puts keys[i] to vals[i], as few round trips as it can.
	putMany(bucket []byte, keys, vals [][]byte) error
	// seq returns the bucket's last sequence number, 0 before the first.
	seq(bucket []byte) (uint64, error)
	// setSeq sets the bucket's last sequence number (a copy's).
	setSeq(bucket []byte, n uint64) error
	// scan calls fn for the bucket's keys in order; fn returns errStop
	// to end early. Keys and values may be valid only during the call.
	scan(bucket []byte, sp span, fn func(k, v []byte) error) error
	// count returns the number of keys in the bucket.
	count(bucket []byte) (int, error)
}

// span chooses the keys a scan visits.
type span struct {
	// past, when set, is an exclusive bound: keys after it (forward) or
	// before it (reverse).
	past []byte
	// reverse visits the keys from the last down.
	reverse bool
	// limit stops after so many keys; 0 visits all.
	limit int
}

// errStop ends a scan early without an error.
var errStop = errors.New("stop scan")

// buckets are every bucket a store holds, in the order store copy moves
// them.
var buckets = [][]byte{bMeta, bSnapshots, bGraphs, bDiffs, bRuns, bResults, bBodies, bAgents, bPlacement, bLedger, bHolds}

func key(id uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, id)
}

func idOf(k []byte) uint64 {
	if len(k) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(k)
}

func putJSON(tx txn, bucket, k []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", k, err)
	}
	return tx.put(bucket, k, data)
}

func getJSON(tx txn, bucket, k []byte, v any) error {
	data, err := tx.get(bucket, k)
	if err != nil {
		return err
	}
	if data == nil {
		return ErrNotFound
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}

func metaID(tx txn, k []byte) (uint64, error) {
	v, err := tx.get(bMeta, k)
	return idOf(v), err
}

func setMetaID(tx txn, k []byte, id uint64) error {
	if id == 0 {
		return tx.del(bMeta, k)
	}
	return tx.put(bMeta, k, key(id))
}

// scanJSON decodes each value of the span into a T and calls fn with
// its key; what names a record in an error ("snapshot", "node").
func scanJSON[T any](tx txn, bucket []byte, sp span, what string, name func([]byte) string, fn func(k []byte, v *T) error) error {
	return tx.scan(bucket, sp, func(k, data []byte) error {
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("%s %s: %w", what, name(k), err)
		}
		return fn(k, &v)
	})
}

// idName and strName name a key in an error.
func idName(k []byte) string  { return fmt.Sprint(idOf(k)) }
func strName(k []byte) string { return string(k) }
