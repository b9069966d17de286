package store_test

import (
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/dbtest"
)

// TestDatabaseFull: the store's table lives on a 16 MiB disk; snapshots
// are written until the disk is full. The write that does not fit fails
// naming the database, with ErrFull (PostgreSQL: 507) or, as MariaDB
// waits for space instead of failing, ErrUnavailable when the operation
// times out (503); reads go on.
func TestDatabaseFull(t *testing.T) {
	t.Parallel()
	for _, k := range dbtest.Kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			srv := dbtest.Start(t.Context(), t, k)
			disk := srv.SmallDisk(t, 16<<20)
			s := openDB(t, srv) // migrated: the tables exist
			ctx := t.Context()
			stmts := []string{"CREATE TABLESPACE small LOCATION '" + disk + "'", "ALTER TABLE toposcope_kv SET TABLESPACE small"}
			if k == dbtest.MariaDB {
				stmts = []string{"DROP TABLE toposcope.toposcope_kv",
					"CREATE TABLE toposcope.toposcope_kv (bucket VARCHAR(32) NOT NULL, k VARBINARY(1024) NOT NULL, v LONGBLOB NOT NULL, PRIMARY KEY (bucket, k)) ENGINE=InnoDB DATA DIRECTORY='" + disk + "'"}
			}
			if err := srv.Exec(ctx, stmts...); err != nil {
				t.Fatal(err)
			}
			first := &store.Snapshot{Status: store.StatusAccepted}
			if err := s.AddSnapshot(ctx, first, []byte(`{}`), nil, nil); err != nil {
				t.Fatal(err)
			}
			blob := make([]byte, 2<<20) // random: gzip cannot shrink it
			var err error
			for i := 0; i < 20 && err == nil; i++ {
				_, _ = rand.Read(blob)
				err = s.AddSnapshot(ctx, &store.Snapshot{Status: store.StatusAccepted}, blob, nil, nil)
			}
			want := store.ErrFull
			if k == dbtest.MariaDB {
				// MariaDB waits for space to be freed instead of failing the
				// write: the operation times out, and the store says so.
				want = store.ErrUnavailable
			}
			if !errors.Is(err, want) || !strings.Contains(err.Error(), "toposcope@127.0.0.1") {
				t.Fatalf("writing 40 MiB onto a 16 MiB disk: %v; want %v naming the database", err, want)
			}
			t.Logf("the write that did not fit: %v", err)
			if snap, err := s.Snapshot(ctx, first.ID); err != nil || snap.ID != first.ID {
				t.Errorf("read on a full disk: %v, %v", snap, err)
			}
		})
	}
}
