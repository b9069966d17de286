package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/toposcope/toposcope/placement"
)

// bPlacement holds the placement budgets (key "budgets", JSON);
// bLedger the ledger records, keyed by an 8-byte big-endian sequence.
var (
	bPlacement = []byte("placement")
	bLedger    = []byte("ledger")
	kBudgets   = []byte("budgets")
)

// SavePlacementBudgets implements placement.Persister.
func (s *Store) SavePlacementBudgets(b *placement.Budgets) error {
	err := s.update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(bPlacement)
		if err != nil {
			return err
		}
		return putJSON(bk, kBudgets, b)
	})
	if err != nil {
		return fmt.Errorf("save budgets: %w", err)
	}
	return nil
}

// AppendPlacementRecords implements placement.Persister: one
// transaction, so all records are stored or none.
func (s *Store) AppendPlacementRecords(recs []placement.Record) error {
	err := s.update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(bLedger)
		if err != nil {
			return err
		}
		for i := range recs {
			seq, err := bk.NextSequence()
			if err != nil {
				return err
			}
			if err := putJSON(bk, binary.BigEndian.AppendUint64(nil, seq), &recs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append ledger records: %w", err)
	}
	return nil
}

// DeletePlacementRecords implements placement.Persister: one
// transaction, so all the workloads' records go or none.
func (s *Store) DeletePlacementRecords(workloads []string) (int, error) {
	drop := make(map[string]bool, len(workloads))
	for _, w := range workloads {
		drop[w] = true
	}
	n := 0
	err := s.update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bLedger)
		if bk == nil {
			return nil
		}
		var keys [][]byte
		err := bk.ForEach(func(k, v []byte) error {
			var r struct {
				Workload string `json:"workload"`
			}
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("ledger record %d: %w", binary.BigEndian.Uint64(k), err)
			}
			if drop[r.Workload] {
				keys = append(keys, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := bk.Delete(k); err != nil {
				return err
			}
		}
		n = len(keys)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("delete ledger records: %w", err)
	}
	return n, nil
}

// LoadPlacement implements placement.Persister.
func (s *Store) LoadPlacement() (*placement.Budgets, []placement.Record, error) {
	var b *placement.Budgets
	var recs []placement.Record
	err := s.db.View(func(tx *bolt.Tx) error {
		if bk := tx.Bucket(bPlacement); bk != nil {
			if data := bk.Get(kBudgets); data != nil {
				b = &placement.Budgets{}
				if err := json.Unmarshal(data, b); err != nil {
					return fmt.Errorf("budgets: %w", err)
				}
			}
		}
		bk := tx.Bucket(bLedger)
		if bk == nil {
			return nil
		}
		recs = make([]placement.Record, 0, bk.Stats().KeyN)
		return bk.ForEach(func(k, v []byte) error {
			var r placement.Record
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("ledger record %d: %w", binary.BigEndian.Uint64(k), err)
			}
			recs = append(recs, r)
			return nil
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("load placement: %w", err)
	}
	return b, recs, nil
}
