package store

import (
	"bytes"
	"context"
	"fmt"
	"maps"
)

// bHolds holds the scheduler extender's held gangs: gang key -> the
// extender's encoding of its hold.
var bHolds = []byte("holds")

// UpdateHolds runs fn on every held gang (key to encoded hold) in one
// read-write transaction and stores what fn returns in their place:
// keys it left out are deleted, changed ones written. Two replicas
// answering calls for one gang at once therefore see one hold: the
// database serializes them (fn may run again after a conflict, so it
// must act on nothing outside). In a bbolt store it runs the same way,
// for one process.
func (s *Store) UpdateHolds(ctx context.Context, fn func(map[string][]byte) (map[string][]byte, error)) error {
	err := s.update(ctx, func(tx txn) error {
		cur := map[string][]byte{}
		if err := tx.scan(bHolds, span{}, func(k, v []byte) error {
			cur[string(k)] = bytes.Clone(v)
			return nil
		}); err != nil {
			return err
		}
		before := maps.Clone(cur)
		next, err := fn(cur)
		if err != nil {
			return err
		}
		for k := range before {
			if _, ok := next[k]; !ok {
				if err := tx.del(bHolds, []byte(k)); err != nil {
					return err
				}
			}
		}
		for k, v := range next {
			if old, ok := before[k]; ok && bytes.Equal(old, v) {
				continue
			}
			if err := tx.put(bHolds, []byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("held gangs: %w", err)
	}
	return nil
}

// Shared reports whether the store is a database that other replicas
// may write too.
func (s *Store) Shared() bool {
	_, ok := s.b.(*sqlBackend)
	return ok
}
