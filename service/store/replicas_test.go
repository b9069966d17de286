package store_test

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/dbtest"
)

// TestReplicasShareWrites: two replicas' stores on one database, writing
// at once: every acknowledged ledger record and snapshot is read by both,
// snapshot IDs never repeat, and of two accepts of one pending snapshot
// exactly one wins.
func TestReplicasShareWrites(t *testing.T) {
	t.Parallel()
	for _, k := range dbtest.Kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			srv := dbtest.Start(t.Context(), t, k)
			replicas := []*store.Store{openDB(t, srv), openDB(t, srv)}
			ctx := t.Context()
			_, data := graph(t, "n1", "n2")
			var wg sync.WaitGroup
			errs := make(chan error, 100)
			ids := make(chan uint64, 100)
			for w := range 4 {
				s := replicas[w%2]
				wg.Go(func() {
					for i := range 10 {
						rec := placement.Record{Account: "a", Workload: fmt.Sprintf("w%d-%d", w, i), GPUs: 1, Start: time.Unix(0, 0).UTC()}
						if err := s.AppendPlacementRecords(ctx, []placement.Record{rec}); err != nil {
							errs <- err
						}
						snap := &store.Snapshot{Status: store.StatusAccepted, Provider: "sim"}
						if err := s.AddSnapshot(ctx, snap, data, nil, &store.Run{}); err != nil {
							errs <- err
						}
						ids <- snap.ID
					}
				})
			}
			wg.Wait()
			close(errs)
			close(ids)
			for err := range errs {
				t.Error(err)
			}
			seen := map[uint64]bool{}
			for id := range ids {
				if seen[id] {
					t.Errorf("snapshot ID %d given twice", id)
				}
				seen[id] = true
			}
			for i, s := range replicas {
				_, recs, err := s.LoadPlacement(ctx)
				if err != nil || len(recs) != 40 {
					t.Errorf("replica %d reads %d ledger records (%v), want 40", i, len(recs), err)
				}
				list, err := s.Snapshots(ctx, 100, 0)
				if err != nil || len(list) != 40 {
					t.Errorf("replica %d lists %d snapshots (%v), want 40", i, len(list), err)
				}
			}
			refused := &store.Snapshot{Status: store.StatusRefused, Provider: "sim"}
			if err := replicas[0].AddSnapshot(ctx, refused, data, nil, nil); err != nil {
				t.Fatal(err)
			}
			results := make(chan error, 2)
			for _, s := range replicas {
				wg.Go(func() {
					_, err := s.AcceptPending(ctx, refused.ID, time.Now(), store.ByOperator)
					results <- err
				})
			}
			wg.Wait()
			close(results)
			var won, lost int
			for err := range results {
				switch {
				case err == nil:
					won++
				case errors.Is(err, store.ErrNotPending):
					lost++
				default:
					t.Errorf("accept: %v", err)
				}
			}
			if won != 1 || lost != 1 {
				t.Errorf("two accepts of one pending snapshot: %d won, %d refused; want 1 and 1", won, lost)
			}
		})
	}
}

// TestDatabaseRestart: the database is killed (SIGKILL) while a replica
// writes. Writes meanwhile fail with ErrUnavailable, in bounded time;
// after the restart they succeed again, and every write acknowledged
// before, during or after is there.
func TestDatabaseRestart(t *testing.T) {
	t.Parallel()
	for _, k := range dbtest.Kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			srv := dbtest.Start(t.Context(), t, k)
			ctx := t.Context()
			s, err := store.OpenDatabase(ctx, store.Database{Driver: srv.Driver(), DSN: srv.DSN(), OpTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var acked []string
			write := func(i int) error {
				w := fmt.Sprintf("w%03d", i)
				err := s.AppendPlacementRecords(ctx, []placement.Record{{Account: "a", Workload: w, GPUs: 1, Start: time.Unix(0, 0).UTC()}})
				if err == nil {
					acked = append(acked, w)
				}
				return err
			}
			i := 0
			for ; i < 20; i++ {
				if err := write(i); err != nil {
					t.Fatalf("before the kill: %v", err)
				}
			}
			srv.Kill()
			for n := 0; n < 3; n, i = n+1, i+1 {
				start := time.Now()
				err := write(i)
				if !errors.Is(err, store.ErrUnavailable) {
					c, derr := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", srv.Port()))
					if derr == nil {
						_ = c.Close()
					}
					t.Fatalf("write with the database down = %v, want ErrUnavailable (dial after: %v)", err, derr)
				}
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("a write with the database down took %s", d)
				}
			}
			if _, _, err := s.Heads(ctx); !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("read with the database down = %v, want ErrUnavailable", err)
			}
			if err := srv.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for ok := 0; ok < 20 && time.Now().Before(deadline); i++ {
				if err := write(i); err == nil {
					ok++
				} else if !errors.Is(err, store.ErrUnavailable) {
					t.Fatalf("write after the restart: %v", err)
				}
			}
			_, recs, err := s.LoadPlacement(ctx)
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]bool{}
			for _, r := range recs {
				have[r.Workload] = true
			}
			for _, w := range acked {
				if !have[w] {
					t.Errorf("acknowledged record %s is lost", w)
				}
			}
			if len(acked) < 40 {
				t.Errorf("%d writes acknowledged, want 20 before and 20 after the restart", len(acked))
			}
		})
	}
}

// TestReadOnlyDatabase: a database that refuses writes gives ErrReadOnly
// naming it; reads go on.
func TestReadOnlyDatabase(t *testing.T) {
	t.Parallel()
	for _, k := range dbtest.Kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			srv := dbtest.Start(t.Context(), t, k)
			ctx := t.Context()
			first := openDB(t, srv)
			_, data := graph(t, "n1")
			snap := &store.Snapshot{Status: store.StatusAccepted}
			if err := first.AddSnapshot(ctx, snap, data, nil, nil); err != nil {
				t.Fatal(err)
			}
			stmt := "SET GLOBAL read_only = ON"
			if k == dbtest.Postgres {
				stmt = "ALTER DATABASE toposcope SET default_transaction_read_only = on"
			}
			if err := srv.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
			s := openDB(t, srv) // new sessions take the database's setting
			err := s.AppendPlacementRecords(ctx, []placement.Record{{Account: "a", Workload: "w", GPUs: 1, Start: time.Unix(0, 0).UTC()}})
			if !errors.Is(err, store.ErrReadOnly) || !strings.Contains(err.Error(), srv.Driver()+"://toposcope@") {
				t.Fatalf("write to a read-only database = %v, want ErrReadOnly", err)
			}
			if cur, _, err := s.Heads(ctx); err != nil || cur != snap.ID {
				t.Errorf("read from a read-only database: current %d, %v; want %d", cur, err, snap.ID)
			}
		})
	}
}
