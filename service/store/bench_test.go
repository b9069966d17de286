package store_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/dbtest"
	"github.com/toposcope/toposcope/topology"
)

// benchStores opens a bbolt store and, on servers started for the
// benchmark, a PostgreSQL and a MariaDB store.
func benchStores(b *testing.B) map[string]func(b *testing.B) *store.Store {
	b.Helper()
	return map[string]func(b *testing.B) *store.Store{
		"bbolt": func(b *testing.B) *store.Store {
			s, err := store.Open(filepath.Join(b.TempDir(), "toposcope.db"), store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		},
		"postgres": func(b *testing.B) *store.Store { return benchDB(b, dbtest.Postgres) },
		"mysql":    func(b *testing.B) *store.Store { return benchDB(b, dbtest.MariaDB) },
	}
}

func benchDB(b *testing.B, k dbtest.Kind) *store.Store {
	b.Helper()
	srv := dbtest.Start(b.Context(), b, k)
	s, err := store.OpenDatabase(b.Context(), store.Database{Driver: srv.Driver(), DSN: srv.DSN(), OpTimeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// bigGraph is a graph of n nodes, 32 to a leaf, 32 leaves to a spine,
// 18 to an NVLink domain, as JSON.
func bigGraph(b *testing.B, n int) []byte {
	b.Helper()
	bld := topology.NewBuilder()
	for i := range n {
		name := fmt.Sprintf("gpu%06d", i)
		bld.AddNode(topology.Node{Name: name, GPUs: 8})
		leaf, spine := i/32, i/1024
		bld.AddPath(name, []topology.SwitchInfo{{ID: fmt.Sprintf("leaf%d", leaf)}, {ID: fmt.Sprintf("spine%d", spine)}, {ID: "core"}})
		bld.AddToDomain(name, fmt.Sprintf("nvl%d", i/18), "")
	}
	g, err := bld.Build()
	if err != nil {
		b.Fatal(err)
	}
	data, err := json.Marshal(g)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkSnapshot100k stores a 100,000-node snapshot (its graph
// gzip-compressed, its run beside it) and reads its graph back, per
// backend.
func BenchmarkSnapshot100k(b *testing.B) {
	data := bigGraph(b, 100000)
	for _, name := range []string{"bbolt", "postgres", "mysql"} {
		b.Run(name, func(b *testing.B) {
			s := benchStores(b)[name](b)
			ctx := b.Context()
			b.Run("store", func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					snap := &store.Snapshot{Status: store.StatusAccepted, Provider: "sim"}
					if err := s.AddSnapshot(ctx, snap, data, nil, &store.Run{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			cur, _, err := s.Heads(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.Run("read", func(b *testing.B) {
				for b.Loop() {
					if _, err := s.Graph(ctx, cur); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkLedger50k appends a 50,000-record ledger in one transaction
// and loads it back, per backend.
func BenchmarkLedger50k(b *testing.B) {
	recs := make([]placement.Record, 50000)
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range recs {
		recs[i] = placement.Record{Account: fmt.Sprintf("acct%03d", i%300), Workload: fmt.Sprintf("job-%d", i), GPUs: 8,
			Nodes: []string{fmt.Sprintf("gpu%06d", i%100000)}, Start: t0, End: t0.Add(time.Hour)}
	}
	for _, name := range []string{"bbolt", "postgres", "mysql"} {
		b.Run(name, func(b *testing.B) {
			open := benchStores(b)[name]
			ctx := b.Context()
			s := open(b)
			b.Run("append", func(b *testing.B) {
				for b.Loop() {
					if err := s.AppendPlacementRecords(ctx, recs); err != nil {
						b.Fatal(err)
					}
				}
			})
			one := open(b) // a store that holds exactly one ledger
			if err := one.AppendPlacementRecords(ctx, recs); err != nil {
				b.Fatal(err)
			}
			b.Run("load", func(b *testing.B) {
				for b.Loop() {
					if _, got, err := one.LoadPlacement(ctx); err != nil || len(got) != len(recs) {
						b.Fatalf("loaded %d records, %v", len(got), err)
					}
				}
			})
		})
	}
}
