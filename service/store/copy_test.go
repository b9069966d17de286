package store_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/dbtest"
)

// TestCopy moves a history from bbolt to PostgreSQL, on to MariaDB and
// back to a new bbolt file: every key, value and sequence arrives as it
// left, and the copy refuses a destination that holds a history.
func TestCopy(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	src := open(t, filepath.Join(t.TempDir(), "from.db"))
	history(t, src)
	want, err := store.Dump(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	chain := []*store.Store{src}
	for _, k := range dbtest.Kinds {
		chain = append(chain, openDB(t, dbtest.Start(ctx, t, k)))
	}
	chain = append(chain, open(t, filepath.Join(t.TempDir(), "to.db")))
	for i := 1; i < len(chain); i++ {
		c, err := store.Copy(ctx, chain[i-1], chain[i])
		if err != nil {
			t.Fatalf("copy %s to %s: %v", chain[i-1].Path(), chain[i].Path(), err)
		}
		if c.Snapshots != 2 || c.Records < 15 { // history keeps two snapshots after its prune
			t.Errorf("copy %d moved %+v", i, c)
		}
		got, err := store.Dump(ctx, chain[i])
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s after the copy differs from the source:\n got %d lines\nwant %d lines", chain[i].Path(), len(got), len(want))
		}
	}
	if _, err := store.Copy(ctx, src, chain[1]); !errors.Is(err, store.ErrNotEmpty) {
		t.Errorf("copy into a store with a history = %v, want ErrNotEmpty", err)
	}
}
