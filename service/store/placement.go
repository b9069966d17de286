package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"

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
func (s *Store) SavePlacementBudgets(ctx context.Context, b *placement.Budgets) error {
	err := s.update(ctx, func(tx txn) error {
		if _, err := tx.nextSeq(bPlacement); err != nil {
			return err
		}
		return putJSON(tx, bPlacement, kBudgets, b)
	})
	if err != nil {
		return fmt.Errorf("save budgets: %w", err)
	}
	return nil
}

// AppendPlacementRecords implements placement.Persister: one
// transaction, so all records are stored or none. A record a ledger
// source saw finish is stored under its source and workload, so that the
// replicas that each sync the source store it once; others get the next
// sequence number.
func (s *Store) AppendPlacementRecords(ctx context.Context, recs []placement.Record) error {
	err := s.update(ctx, func(tx txn) error {
		if _, err := tx.nextSeq(bPlacement); err != nil {
			return err
		}
		keys, vals := make([][]byte, len(recs)), make([][]byte, len(recs))
		fresh := 0
		for i := range recs {
			if keys[i] = sourceKey(&recs[i]); keys[i] == nil {
				fresh++
			}
			data, err := json.Marshal(&recs[i])
			if err != nil {
				return fmt.Errorf("encode ledger record %d: %w", i, err)
			}
			vals[i] = data
		}
		if fresh > 0 {
			seq, err := tx.nextSeqs(bLedger, fresh)
			if err != nil {
				return err
			}
			for i := range keys {
				if keys[i] == nil {
					keys[i] = key(seq)
					seq++
				}
			}
		}
		return tx.putMany(bLedger, keys, vals)
	})
	if err != nil {
		return fmt.Errorf("append ledger records: %w", err)
	}
	return nil
}

// DeletePlacementRecords implements placement.Persister: one
// transaction, so all the workloads' records go or none.
func (s *Store) DeletePlacementRecords(ctx context.Context, workloads []string) (int, error) {
	drop := make(map[string]bool, len(workloads))
	for _, w := range workloads {
		drop[w] = true
	}
	n := 0
	err := s.update(ctx, func(tx txn) error {
		type workload struct {
			Workload string `json:"workload"`
		}
		var keys [][]byte
		err := scanJSON(tx, bLedger, span{}, "ledger record", ledgerName, func(k []byte, r *workload) error {
			if drop[r.Workload] {
				keys = append(keys, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := tx.del(bLedger, k); err != nil {
				return err
			}
		}
		if _, err := tx.nextSeq(bPlacement); err != nil {
			return err
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
func (s *Store) LoadPlacement(ctx context.Context) (*placement.Budgets, []placement.Record, error) {
	var b *placement.Budgets
	var recs []placement.Record
	err := s.view(ctx, func(tx txn) error {
		b, recs = nil, nil
		var sb placement.Budgets
		switch err := getJSON(tx, bPlacement, kBudgets, &sb); {
		case err == nil:
			b = &sb
		case !errors.Is(err, ErrNotFound):
			return fmt.Errorf("budgets: %w", err)
		}
		n, err := tx.count(bLedger)
		if err != nil {
			return err
		}
		recs = make([]placement.Record, 0, n)
		return scanJSON(tx, bLedger, span{}, "ledger record", ledgerName, func(_ []byte, r *placement.Record) error {
			recs = append(recs, *r)
			return nil
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("load placement: %w", err)
	}
	return b, recs, nil
}

// PlacementVersion implements placement.Versioned: a number that every
// change of the budgets or the ledger, by any replica, makes grow.
func (s *Store) PlacementVersion(ctx context.Context) (uint64, error) {
	var v uint64
	err := s.view(ctx, func(tx txn) (err error) {
		v, err = tx.seq(bPlacement)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("placement version: %w", err)
	}
	return v, nil
}

// sourceKey is the ledger key of a source's record: 0xff and a digest
// of its source and workload (after every sequence key); nil for a
// record no source gave.
func sourceKey(r *placement.Record) []byte {
	if r.Source == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(r.Source + "\x00" + r.Workload))
	return append([]byte{0xff}, sum[:16]...)
}

// ledgerName names a ledger key in an error.
func ledgerName(k []byte) string {
	if len(k) == 8 {
		return idName(k)
	}
	return fmt.Sprintf("%x", k)
}
