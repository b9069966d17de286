package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

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
func (s *Store) Prune(now time.Time, r config.Retention) (Pruned, error) {
	var p Pruned
	err := s.update(func(tx *bolt.Tx) error {
		var err error
		if p.Snapshots, err = pruneSnapshots(tx, now, r); err != nil {
			return err
		}
		if p.Results, err = pruneResults(tx, now, r); err != nil {
			return err
		}
		p.Runs, err = pruneByCount(tx.Bucket(bRuns), r.Runs)
		return err
	})
	if err != nil {
		return p, fmt.Errorf("prune store: %w", err)
	}
	return p, nil
}

func pruneSnapshots(tx *bolt.Tx, now time.Time, r config.Retention) (int, error) {
	keep := map[uint64]bool{metaID(tx, kCurrent): true, metaID(tx, kPending): true}
	b := tx.Bucket(bSnapshots)
	total := b.Stats().KeyN
	var doomed []uint64
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		id := idOf(k)
		if keep[id] {
			continue
		}
		var snap Snapshot
		if err := json.Unmarshal(v, &snap); err != nil {
			return 0, fmt.Errorf("snapshot %d: %w", id, err)
		}
		tooMany := total-len(doomed) > r.Snapshots
		tooOld := r.SnapshotAge > 0 && now.Sub(snap.CreatedAt) > r.SnapshotAge
		if !tooMany && !tooOld {
			break // IDs grow with time: the rest is newer
		}
		doomed = append(doomed, id)
	}
	for _, id := range doomed {
		for _, name := range [][]byte{bSnapshots, bGraphs, bDiffs} {
			if err := tx.Bucket(name).Delete(key(id)); err != nil {
				return 0, fmt.Errorf("delete snapshot %d: %w", id, err)
			}
		}
	}
	return len(doomed), nil
}

func pruneResults(tx *bolt.Tx, now time.Time, r config.Retention) (int, error) {
	type fin struct {
		id    string
		at    time.Time
		bytes int64
	}
	var finished []fin
	var total int64
	err := tx.Bucket(bResults).ForEach(func(k, v []byte) error {
		var res Result
		if err := json.Unmarshal(v, &res); err != nil {
			return fmt.Errorf("request %s: %w", k, err)
		}
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
		if err := tx.Bucket(bResults).Delete([]byte(f.id)); err != nil {
			return n, fmt.Errorf("delete request %s: %w", f.id, err)
		}
		if err := tx.Bucket(bBodies).Delete([]byte(f.id)); err != nil {
			return n, fmt.Errorf("delete request %s: %w", f.id, err)
		}
		n++
	}
	return n, nil
}

func pruneByCount(b *bolt.Bucket, limit int) (int, error) {
	extra := b.Stats().KeyN - limit
	if extra <= 0 {
		return 0, nil
	}
	var doomed [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && len(doomed) < extra; k, _ = c.Next() {
		doomed = append(doomed, slices.Clone(k))
	}
	for _, k := range doomed {
		if err := b.Delete(k); err != nil {
			return 0, fmt.Errorf("delete %d: %w", idOf(k), err)
		}
	}
	return len(doomed), nil
}
