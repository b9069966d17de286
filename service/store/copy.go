package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// ErrNotEmpty is wrapped when a copy's destination already holds a
// history.
var ErrNotEmpty = errors.New("destination store is not empty")

// Copied counts what Copy moved.
type Copied struct {
	// Records is the keys copied, every bucket together.
	Records int `json:"records"`
	// Snapshots is the snapshots among them.
	Snapshots int `json:"snapshots"`
}

// copyBatch is the most records a copy writes in one transaction.
const copyBatch = 500

// Copy moves every bucket of from, with its sequences (so that IDs go on
// where they were), into to, which must hold no snapshot, run or ledger
// record yet. Each batch is its own transaction: a copy that fails part
// way leaves a destination to empty and copy into again.
func Copy(ctx context.Context, from, to *Store) (Copied, error) {
	var c Copied
	if err := to.view(ctx, func(tx txn) error {
		for _, b := range [][]byte{bSnapshots, bRuns, bLedger, bAgents} {
			n, err := tx.count(b)
			if err != nil {
				return err
			}
			if n > 0 {
				return fmt.Errorf("%s holds %d %s: %w", to.Path(), n, b, ErrNotEmpty)
			}
		}
		return nil
	}); err != nil {
		return c, err
	}
	for _, bucket := range buckets {
		var past []byte
		for {
			var keys, vals [][]byte
			if err := from.view(ctx, func(tx txn) error {
				keys, vals = nil, nil
				sp := span{past: past, limit: copyBatch}
				return tx.scan(bucket, sp, func(k, v []byte) error {
					keys, vals = append(keys, bytes.Clone(k)), append(vals, bytes.Clone(v))
					return nil
				})
			}); err != nil {
				return c, fmt.Errorf("read %s from %s: %w", bucket, from.Path(), err)
			}
			if len(keys) == 0 {
				break
			}
			if err := to.update(ctx, func(tx txn) error { return tx.putMany(bucket, keys, vals) }); err != nil {
				return c, fmt.Errorf("write %s into %s: %w", bucket, to.Path(), err)
			}
			c.Records += len(keys)
			if bytes.Equal(bucket, bSnapshots) {
				c.Snapshots += len(keys)
			}
			past = keys[len(keys)-1]
		}
		var seq uint64
		if err := from.view(ctx, func(tx txn) (err error) {
			seq, err = tx.seq(bucket)
			return err
		}); err != nil {
			return c, err
		}
		if err := to.update(ctx, func(tx txn) error { return tx.setSeq(bucket, seq) }); err != nil {
			return c, fmt.Errorf("sequence of %s: %w", bucket, err)
		}
	}
	return c, nil
}
