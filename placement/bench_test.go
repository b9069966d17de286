package placement

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toposcope/toposcope/providers/sim"
)

// BenchmarkRank1024on100k ranks a 1,024-GPU request on a generated
// 100,000-node fat tree (8 GPUs per node, 18-node domains) at 50%
// occupancy: every other node is held by a one-node job, half of them
// unallocated, half allocated and protected.
func BenchmarkRank1024on100k(b *testing.B) {
	g, err := sim.GenerateGraph(sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: 100_000, NodesPerLeaf: 32,
		LeavesPerSpine: 16, DomainSize: 18})
	if err != nil {
		b.Fatal(err)
	}
	var recs []Record
	for i, n := range g.Nodes() {
		if i%2 == 1 {
			continue
		}
		r := Record{Account: fmt.Sprintf("acct%02d", i%40), Workload: fmt.Sprintf("w%d", i), GPUs: n.GPUs,
			Nodes: []string{n.Name}, Start: t0.Add(-time.Duration(i%600) * time.Minute)}
		if i%4 == 0 {
			r.Allocated, r.MinRuntime = true, 8*time.Hour
		}
		recs = append(recs, r)
	}
	cfg := DefaultConfig()
	cl, err := NewCluster(g, recs, t0)
	if err != nil {
		b.Fatal(err)
	}
	st, err := Compute(EqualTree(append((&Ledger{Records: recs}).Accounts(), "req")), recs, t0, cl.GPUs(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Account: "req", GPUs: 1024, MinRuntime: time.Hour, Duration: 4 * time.Hour}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Place(cl, st, req, cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStandings10kAccounts1M computes standings (all modes' values
// plus owed/delivered) for 10,000 leaf accounts (100 programs × 100
// projects) and 1,000,000 ledger records spread over the 7-day window,
// as the service does: a view of its store, then the standings.
func BenchmarkStandings10kAccounts1M(b *testing.B) {
	bud, recs := standingsFixture(b)
	st := NewBooks()
	if err := st.SetBudgets(context.Background(), bud); err != nil {
		b.Fatal(err)
	}
	if err := st.Append(context.Background(), recs); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []Mode{ModeFairTree, ModeClassic, ModeWindow} {
		b.Run(string(mode), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Mode = mode
			b.ReportAllocs()
			for b.Loop() {
				v, err := st.View(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ComputeIndexed(v.Tree, v.Records, v.Index, t0, 100_000, cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStandingsCompute is the same from a plain slice of records,
// whose account names are looked up each time (the CLI's path).
func BenchmarkStandingsCompute(b *testing.B) {
	bud, recs := standingsFixture(b)
	tr, err := NewTree(bud)
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compute(tr, recs, t0, 100_000, cfg); err != nil {
			b.Fatal(err)
		}
	}
}

func standingsFixture(b *testing.B) (*Budgets, []Record) {
	b.Helper()
	bud := &Budgets{}
	for p := range 100 {
		prog := AccountSpec{Name: fmt.Sprintf("p%03d", p), Shares: Shares(float64(1 + p%7))}
		for q := range 100 {
			prog.Children = append(prog.Children, AccountSpec{Name: fmt.Sprintf("p%03d-%03d", p, q), Shares: Shares(float64(1 + q%5))})
		}
		bud.Accounts = append(bud.Accounts, prog)
	}
	recs := make([]Record, 1_000_000)
	week := 7 * 24 * time.Hour
	for i := range recs {
		start := t0.Add(-time.Duration(i*7919%int(week/time.Minute)) * time.Minute)
		recs[i] = Record{Account: fmt.Sprintf("p%03d-%03d", i%100, (i/100)%100), GPUs: 1 + i%64,
			Start: start, End: start.Add(time.Duration(1+i%240) * time.Minute), Allocated: i%5 != 0}
	}
	return bud, recs
}
