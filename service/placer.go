package service

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/topology"
)

// Placer answers placement questions on the current topology and the
// placement ledger: the cluster as the ledger occupies it, the accounts'
// standings, and ranked placements (the planner of POST /v1/placements).
// It keeps the unoccupied cluster of the current graph, so that each
// question occupies it with the ledger instead of indexing 100,000 nodes
// again. Safe for concurrent use.
type Placer struct {
	loop   *Loop
	ledger *placement.Books
	now    func() time.Time
	base   atomic.Pointer[baseCluster]
}

// baseCluster is the unoccupied cluster of one graph, made once.
type baseCluster struct {
	graph   *topology.Graph
	once    sync.Once
	cluster *placement.Cluster
	err     error
}

// Occupancy is the current topology as the ledger occupies it at one
// instant: the state whose graph it was built on (a caller that also
// reads the graph reads the same one, even when a discovery lands
// meanwhile), the ledger view it was built from, and the ledger records
// left out because they no longer fit the topology.
type Occupancy struct {
	State   *State
	Cluster *placement.Cluster
	View    placement.View
	// At is the instant the ledger was applied at.
	At time.Time
	// Ignored names the records left out (GET /v1/ledger/ignored lists
	// them); OccupyErr is why the whole ledger did not fit.
	Ignored   []string
	OccupyErr error
}

func newPlacer(loop *Loop, ledger *placement.Books, now func() time.Time) *Placer {
	return &Placer{loop: loop, ledger: ledger, now: now}
}

// Occupied returns the current topology occupied by the ledger; extra
// names accounts to count in the standings' tree although the ledger has
// no record of them (the account asking for a placement). ErrNoTopology
// before the first discovery.
func (p *Placer) Occupied(ctx context.Context, extra ...string) (Occupancy, error) {
	return p.OccupiedHeld(ctx, nil, extra...)
}

// Held returns the records held beside the ledger's, given the ledger's
// records and the instant they are applied at: placements promised but
// not bound yet (the scheduler extender's held gangs, less what their
// pods already hold in the ledger).
type Held func(ledger []placement.Record, at time.Time) []placement.Record

// OccupiedHeld is Occupied with the records held (nil for none)
// occupying GPUs beside the ledger's, in one pass. They count for
// occupancy only, not in the standings; one that no longer fits is left
// out and named in Ignored.
func (p *Placer) OccupiedHeld(ctx context.Context, held Held, extra ...string) (Occupancy, error) {
	st := p.loop.State()
	if st.Graph == nil {
		return Occupancy{}, ErrNoTopology
	}
	view, err := p.ledger.View(ctx, extra...)
	if err != nil {
		return Occupancy{}, err
	}
	o := Occupancy{State: st, View: view, At: p.now()}
	base, err := p.unoccupied(st.Graph)
	if err != nil {
		return Occupancy{}, err
	}
	recs := view.Records
	if held != nil {
		if h := held(view.Records, o.At); len(h) > 0 {
			recs = append(slices.Clip(recs), h...)
		}
	}
	if o.Cluster, o.OccupyErr = base.Occupy(recs, o.At); o.OccupyErr != nil {
		// A record stored before the topology changed (or before records
		// were checked) must not take every answer down: answer with the
		// others, and say which were ignored.
		var keep []placement.Record
		keep, o.Ignored = placement.UsableRecords(st.Graph, recs, o.At)
		if o.Cluster, err = base.Occupy(keep, o.At); err != nil {
			return Occupancy{}, err
		}
	}
	return o, nil
}

// NodeCount is the current topology's node count (0 before the first
// discovery).
func (p *Placer) NodeCount() int {
	if g := p.loop.State().Graph; g != nil {
		return len(g.Nodes())
	}
	return 0
}

// Repeated returns the first of names named a second time (see
// placement.Cluster.Repeated), on the current topology's node index;
// before the first discovery every name is unknown to it.
func (p *Placer) Repeated(names []string) (string, bool) {
	base := &placement.Cluster{}
	if g := p.loop.State().Graph; g != nil {
		if c, err := p.unoccupied(g); err == nil {
			base = c
		}
	}
	return base.Repeated(names)
}

// Standings computes the accounts' fair-share standings of o.
func (p *Placer) Standings(o Occupancy, cfg placement.Config) (*placement.Standings, error) {
	return placement.ComputeIndexed(o.View.Tree, o.View.Records, o.View.Index, o.At, o.Cluster.GPUs(), cfg)
}

// Place ranks the candidate node sets of req on the current topology and
// ledger, with their explanations. Without budgets, the account asking
// gets an equal share like every account of the ledger; with budgets, an
// account outside them is unknown.
func (p *Placer) Place(ctx context.Context, req placement.Request, cfg placement.Config) (*placement.Result, Occupancy, error) {
	return p.PlaceWith(ctx, req, cfg, PlaceOptions{})
}

// PlaceOptions narrow a placement beyond the ledger.
type PlaceOptions struct {
	// Held gives the records that occupy GPUs beside the ledger's
	// (OccupiedHeld); nil for none.
	Held Held
	// Only, when not nil, is the nodes the placement may take (those a
	// scheduler's own filters left); others are unavailable.
	Only []string
}

// PlaceWith is Place with the options' held records and node limit.
func (p *Placer) PlaceWith(ctx context.Context, req placement.Request, cfg placement.Config, opts PlaceOptions) (*placement.Result, Occupancy, error) {
	o, err := p.OccupiedHeld(ctx, opts.Held, req.Account)
	if err != nil {
		return nil, o, err
	}
	st, err := p.Standings(o, cfg)
	if err != nil {
		return nil, o, err
	}
	c := o.Cluster
	if opts.Only != nil {
		c = c.Only(opts.Only)
	}
	res, err := placement.Place(c, st, req, cfg)
	return res, o, err
}

// unoccupied returns the unoccupied cluster of g, kept while g is the
// current graph.
func (p *Placer) unoccupied(g *topology.Graph) (*placement.Cluster, error) {
	for {
		b := p.base.Load()
		if b != nil && b.graph == g {
			b.once.Do(func() { b.cluster, b.err = placement.NewCluster(g, nil, time.Time{}) })
			return b.cluster, b.err
		}
		if p.base.CompareAndSwap(b, &baseCluster{graph: g}) {
			continue
		}
	}
}
