package store

import (
	"context"
	"fmt"
)

// Dump lists every key, value and sequence of every bucket, for tests
// that compare two stores.
func Dump(ctx context.Context, s *Store) ([]string, error) {
	var out []string
	err := s.view(ctx, func(tx txn) error {
		for _, b := range buckets {
			n, err := tx.seq(b)
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("%s seq %d", b, n))
			if err := tx.scan(b, span{}, func(k, v []byte) error {
				out = append(out, fmt.Sprintf("%s %x %x", b, k, v))
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
