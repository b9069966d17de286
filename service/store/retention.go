package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/toposcope/toposcope/internal/config"
)

// Pruned counts what Prune deleted.
type Pruned struct {
	Snapshots int `json:"snapshots"`
	Results   int `json:"results"`
	Runs      int `json:"runs"`
}

// Prune applies the retention limits as of now: it deletes the oldest
// snapshots (with their graphs and diffs) beyond the count or the age,
// except the current and the pending one; the oldest finished results
// likewise (pending ones are kept); and the oldest runs beyond the count.
func (s *Store) Prune(ctx context.Context, now time.Time, r config.Retention) (Pruned, error) {
	var p Pruned
	err := s.update(ctx, func(tx txn) error {
		p = Pruned{}
		var err error
		if p.Snapshots, err = pruneSnapshots(tx, now, r); err != nil {
			return err
		}
		if p.Results, err = pruneResults(tx, now, r); err != nil {
			return err
		}
		p.Runs, err = pruneByCount(tx, bRuns, r.Runs)
		return err
	})
	if err != nil {
		return Pruned{}, fmt.Errorf("prune store: %w", err)
	}
	return p, nil
}

// pruneSnapshots deletes the oldest snapshots past the count or the age,
// never the current or the pending one.
func pruneSnapshots(tx txn, now time.Time, r config.Retention) (int, error) {
	cur, err1 := metaID(tx, kCurrent)
	pend, err2 := metaID(tx, kPending)
	total, err3 := tx.count(bSnapshots)
	if err := errors.Join(err1, err2, err3); err != nil {
		return 0, err
	}
	keep := map[uint64]bool{cur: true, pend: true}
	var doomed []uint64
	err := scanJSON(tx, bSnapshots, span{}, "snapshot", idName, func(k []byte, snap *Snapshot) error {
		id := idOf(k)
		if keep[id] {
			return nil
		}
		tooMany := total-len(doomed) > r.Snapshots
		tooOld := r.SnapshotAge > 0 && now.Sub(snap.CreatedAt) > r.SnapshotAge
		if !tooMany && !tooOld {
			return errStop // IDs grow with time: the rest is newer
		}
		doomed = append(doomed, id)
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, id := range doomed {
		for _, name := range [][]byte{bSnapshots, bGraphs, bDiffs} {
			if err := tx.del(name, key(id)); err != nil {
				return 0, fmt.Errorf("delete snapshot %d: %w", id, err)
			}
		}
	}
	return len(doomed), nil
}

// pruneResults deletes the oldest finished results past the count, the
// age or the bytes.
func pruneResults(tx txn, now time.Time, r config.Retention) (int, error) {
	type fin struct {
		id    string
		at    time.Time
		bytes int64
	}
	var finished []fin
	var total int64
	err := scanJSON(tx, bResults, span{}, "request", strName, func(k []byte, res *Result) error {
		if res.State != StatePending {
			b := int64(res.Size + len(res.Request))
			finished = append(finished, fin{string(k), res.FinishedAt, b})
			total += b
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	slices.SortFunc(finished, func(a, b fin) int { return a.at.Compare(b.at) })
	n := 0
	for i, f := range finished {
		tooMany := len(finished)-i > r.Results
		tooOld := r.ResultAge > 0 && now.Sub(f.at) > r.ResultAge
		tooBig := r.ResultBytes > 0 && total > r.ResultBytes
		if !tooMany && !tooOld && !tooBig {
			break
		}
		total -= f.bytes
		if err := errors.Join(tx.del(bResults, []byte(f.id)), tx.del(bBodies, []byte(f.id))); err != nil {
			return n, fmt.Errorf("delete request %s: %w", f.id, err)
		}
		n++
	}
	return n, nil
}

// pruneByCount deletes the first keys of bucket past limit.
func pruneByCount(tx txn, bucket []byte, limit int) (int, error) {
	total, err := tx.count(bucket)
	if err != nil {
		return 0, err
	}
	extra := total - limit
	if extra <= 0 {
		return 0, nil
	}
	var doomed [][]byte
	if err := tx.scan(bucket, span{limit: extra}, func(k, _ []byte) error {
		doomed = append(doomed, slices.Clone(k))
		return nil
	}); err != nil {
		return 0, err
	}
	for _, k := range doomed {
		if err := tx.del(bucket, k); err != nil {
			return 0, fmt.Errorf("delete %d: %w", idOf(k), err)
		}
	}
	return len(doomed), nil
}
