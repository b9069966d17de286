package slurm

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// errLayout is wrapped when the padded layout breaks its own invariant; it
// means a bug, and nothing is written.
var errLayout = errors.New("internal error: padded block layout splits a switch")

// defaultLevels23 is the number of levels (0-4) Slurm 23.11 uses without
// BlockLevels=.
const defaultLevels23 = 5

// blockOptions are the inputs of planBlocks.
type blockOptions struct {
	version Version
	sizes   []int             // configured BlockSizes; nil means inferred
	include func(string) bool // node filter; nil keeps every node
	small   string            // "", SmallBlocksError or SmallBlocksDrop
	what    string            // names the topology in messages
	names   *BlockName        // names the blocks after their nodes; nil: domains
}

// droppedBlock is a domain left out by the SmallBlocksDrop policy.
type droppedBlock struct {
	name  string
	nodes []string
}

// blockPlan is what a block topology writes.
type blockPlan struct {
	slots    []blockSlot
	base     int    // base block size in nodes
	sizes    []int  // BlockSizes, in nodes, base first
	inferred bool   // sizes were inferred, not configured
	baseFrom string // where the base size comes from, for messages
	// omitted are inferred sizes left out because their aggregates would
	// split a switch (Slurm before 25.05 has no padding blocks).
	omitted []int
	// levels23 is the BlockLevels= value for Slurm 23.11; "" writes none.
	levels23 string
	dropped  []droppedBlock
	real     int // blocks that hold nodes
	// nominal is the most common domain size when the inferred base is
	// smaller (the smallest domain's, so that Slurm keeps every block);
	// small names the domains of that size. 0 when the base is nominal.
	nominal int
	small   []string
}

// planBlocks turns the accelerator domains of g into blocks for o.version:
// fabric order; inferred aggregate sizes up to the block count of the
// largest switch tree (aggregates never join separate fabrics, nor domains
// the fabric does not place); for 25.05 and later, empty padding blocks
// that keep every aggregate inside one switch; before 25.05, only the
// aggregation levels that need no padding (an error if a configured size
// needs it).
func planBlocks(g *topology.Graph, o blockOptions) (*blockPlan, error) {
	doms := orderDomains(g, o.include)
	if len(doms) == 0 {
		return nil, fmt.Errorf("%s: the graph has no accelerator domain, and a block topology needs at least one block: %w", o.what, engines.ErrInexpressible)
	}
	p := &blockPlan{inferred: len(o.sizes) == 0}
	implicit := !o.version.AtLeast(V2405)
	if implicit && !p.inferred {
		return nil, fmt.Errorf("%s: blockSizes %v: BlockSizes= needs Slurm 24.05 or later (%s reads BlockLevels=): %w", o.what, o.sizes, o.version, engines.ErrInexpressible)
	}
	var err error
	if doms, err = p.applyVersionRules(doms, o); err != nil {
		return nil, err
	}
	p.real = len(doms)
	l := newLayout(g, doms)
	mults := []int{1}
	switch {
	case implicit: // 23.11 always evaluates levels 0-4 unless told otherwise
		for k := 1; k < defaultLevels23; k++ {
			mults = append(mults, 1<<k)
		}
	case p.inferred:
		for k := 1; k <= min(ceilLog2(l.largestFabric()), maxBlockLevel); k++ {
			mults = append(mults, 1<<k)
		}
	default:
		for _, s := range o.sizes[1:] {
			mults = append(mults, s/p.base)
		}
	}
	pad := o.version.AtLeast(V2505)
	if pad {
		l.placePadded(mults[len(mults)-1])
	} else {
		l.placeInOrder()
	}
	p.slots = l.slots
	kept, err := p.chooseLevels(l, mults, o, pad, implicit)
	if err != nil {
		return nil, err
	}
	for _, m := range kept {
		p.sizes = append(p.sizes, m*p.base)
	}
	if err := o.names.rename(p, o.what); err != nil {
		return nil, err
	}
	if implicit && len(kept) < defaultLevels23 {
		levels := make([]string, len(kept))
		for i, m := range kept {
			levels[i] = strconv.Itoa(ceilLog2(m))
		}
		p.levels23 = strings.Join(levels, ",")
	}
	return p, nil
}

// applyVersionRules sets the base size (configured, or the most common
// domain size) and applies what slurmctld before 25.05 refuses: a block
// smaller than the base (23.11: any block of another size). Such blocks
// are an error or, with SmallBlocksDrop, left out. It returns the domains
// to write.
func (p *blockPlan) applyVersionRules(doms []fabricDomain, o blockOptions) ([]fabricDomain, error) {
	src := "blockSizes[0]"
	v := o.version
	if p.inferred {
		var err error
		if p.base, src, err = inferBase(doms, o); err != nil {
			return nil, err
		}
		p.baseFrom = src
		if common := commonSize(doms); p.base < common {
			p.nominal = common
			for i := range doms {
				if len(doms[i].nodes) == p.base {
					p.small = append(p.small, doms[i].d.Name)
				}
			}
		}
	} else {
		p.base = o.sizes[0]
	}
	if v.AtLeast(V2505) {
		return doms, nil
	}
	exact := !v.AtLeast(V2405)
	kept := doms[:0:0]
	for i := range doms {
		d := &doms[i]
		n := len(d.nodes)
		if n == p.base || n > p.base && !exact {
			kept = append(kept, *d)
			continue
		}
		if o.small == SmallBlocksError {
			if exact {
				return nil, fmt.Errorf("%s: block %q has %d nodes, not the base block size %d (%s); Slurm %s needs every block to hold exactly that many (fatal \"Block configuration (%s) children count no equal bblock_node_cnt\"; 24.05+ accepts larger blocks, 25.05+ smaller ones); set smallBlocks: drop or target a later version: %w",
					o.what, d.d.Name, n, p.base, src, v, d.d.Name, engines.ErrInexpressible)
			}
			return nil, fmt.Errorf("%s: block %q has %d nodes, fewer than the base block size %d (%s); Slurm %s refuses it (fatal \"Block configuration (%s) children count lower than bblock_node_cnt\"; 25.05 and later accept it); lower blockSizes[0], set smallBlocks: drop, or target 25.05: %w",
				o.what, d.d.Name, n, p.base, src, v, d.d.Name, engines.ErrInexpressible)
		}
		p.dropped = append(p.dropped, droppedBlock{name: d.d.Name, nodes: d.nodes})
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("%s: every block is smaller than the base block size %d (%s), so no block is left for Slurm %s: %w", o.what, p.base, src, v, engines.ErrInexpressible)
	}
	return kept, nil
}

// inferBase chooses the base block size when none is configured: one that
// keeps every domain for the target version. From 25.05 any size is kept
// and the base is the most common domain size; 24.05 and 24.11 keep
// blocks larger than the base, so the base is the smallest domain; 23.11
// keeps only blocks of exactly the base size, so domains of different
// sizes cannot all be kept, and that is an error naming the nodes the
// most common size would lose. An explicit smallBlocks (drop or error)
// takes the most common size: the operator chose to drop or to refuse.
func inferBase(doms []fabricDomain, o blockOptions) (int, string, error) {
	v := o.version
	switch {
	case v.AtLeast(V2505), o.small == SmallBlocksDrop:
		return commonSize(doms), "the most common domain size", nil
	case v.AtLeast(V2405):
		if least := smallestSize(doms); least != commonSize(doms) {
			return least, "the smallest domain size, so that every block is kept", nil
		}
		return commonSize(doms), "the most common domain size", nil
	}
	base := commonSize(doms)
	var lost []string
	sizes := map[int]bool{}
	for i := range doms {
		sizes[len(doms[i].nodes)] = true
		if len(doms[i].nodes) != base {
			lost = append(lost, doms[i].nodes...)
		}
	}
	if len(lost) == 0 || o.small != "" {
		return base, "the most common domain size", nil
	}
	hostlist.Sort(lost)
	return 0, "", fmt.Errorf("%s: the NVLink domains have %d different sizes, and Slurm %s needs every block to hold exactly the base block size: "+
		"no base keeps them all; with the most common size, %d, these %d nodes would be left out: %s. "+
		"Set smallBlocks: drop to leave them out (reported as uncovered), or target Slurm 24.05 or later: %w",
		o.what, len(sizes), v, base, len(lost), hostlist.Compress(lost), engines.ErrInexpressible)
}

// smallestSize returns the smallest number of nodes of a domain.
func smallestSize(doms []fabricDomain) int {
	least := 0
	for i := range doms {
		if n := len(doms[i].nodes); least == 0 || n < least {
			least = n
		}
	}
	return least
}

// commonSize returns the most common number of nodes per domain, the
// larger one on a tie: the nominal size of a domain, which a degraded one
// (a rack with missing nodes) falls short of.
func commonSize(doms []fabricDomain) int {
	count := make(map[int]int)
	best := 0
	for i := range doms {
		n := len(doms[i].nodes)
		count[n]++
		if c := count[n]; c > count[best] || c == count[best] && n > best {
			best = n
		}
	}
	return best
}

// chooseLevels returns the aggregation multipliers to write (1 first). A
// padded layout keeps every level by construction (checked here). Without
// padding, an inferred level is kept only if none of its aggregates splits
// a switch, and a configured level that would is an error.
func (p *blockPlan) chooseLevels(l *layout, mults []int, o blockOptions, pad, implicit bool) ([]int, error) {
	n := len(l.slots)
	kept := []int{1}
	for _, m := range mults[1:] {
		try := append(kept[:len(kept):len(kept)], m)
		if len(effectiveMults(n, try)) == len(try) {
			a, gi, ok := l.splits(levelAggregates(n, try, len(try)-1, implicit))
			switch {
			case !ok && pad:
				return nil, fmt.Errorf("%s: size %d: %s: %w", o.what, m*p.base, l.describeSplit(a, gi), errLayout)
			case !ok && (p.inferred || implicit):
				p.omitted = append(p.omitted, m*p.base)
				continue
			case !ok:
				return nil, fmt.Errorf("%s: block size %d: %s; Slurm %s cannot pad with empty blocks to keep the aggregate inside the switch (25.05 and later can); remove %d from blockSizes or target 25.05: %w",
					o.what, m*p.base, l.describeSplit(a, gi), o.version, m*p.base, engines.ErrInexpressible)
			}
		}
		kept = try
	}
	return kept, nil
}

// renderBlockConf writes the plan as topology.conf lines.
func renderBlockConf(buf *bytes.Buffer, p *blockPlan, v Version, idComments bool) {
	var z hostlist.Compressor
	var list []byte
	for i := range p.slots {
		s := &p.slots[i]
		if idComments && !s.padding() {
			writeIDComment(buf, s.name, s.id)
		}
		buf.WriteString("BlockName=")
		buf.WriteString(s.name)
		if !s.padding() {
			buf.WriteString(" Nodes=")
			list = z.Append(list[:0], s.nodes)
			buf.Write(list)
		}
		buf.WriteByte('\n')
	}
	switch {
	case v.AtLeast(V2405):
		buf.WriteString("BlockSizes=")
		for i, s := range p.sizes {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(strconv.Itoa(s))
		}
		buf.WriteByte('\n')
	case p.levels23 != "":
		buf.WriteString("BlockLevels=")
		buf.WriteString(p.levels23)
		buf.WriteByte('\n')
	}
}

// blockCoverage lists the nodes a block plan leaves out: nodes in no
// domain (or outside the filter) and nodes of dropped blocks.
func blockCoverage(g *topology.Graph, p *blockPlan, include func(string) bool) ([]string, []string) {
	var none []string
	for _, n := range g.Nodes() {
		if n.Domain == "" && (include == nil || include(n.Name)) {
			none = append(none, n.Name)
		}
	}
	var dropped []string
	if p != nil {
		for _, d := range p.dropped {
			dropped = append(dropped, d.nodes...)
		}
		hostlist.Sort(dropped)
	}
	return none, dropped
}

// blockCoverageReport turns blockCoverage into an engines.Coverage.
func blockCoverageReport(g *topology.Graph, p *blockPlan, include func(string) bool, v Version) engines.Coverage {
	none, dropped := blockCoverage(g, p, include)
	var reasons []string
	if len(none) > 0 {
		reasons = append(reasons, "in no accelerator domain")
	}
	if len(dropped) > 0 {
		reasons = append(reasons, fmt.Sprintf("in a block whose size Slurm %s refuses (smaller than the base size; 23.11: not equal to it), left out by smallBlocks: drop", v))
	}
	un := append(none, dropped...)
	if len(un) == 0 {
		return engines.Coverage{}
	}
	hostlist.Sort(un)
	return engines.Coverage{Uncovered: un, Reason: strings.Join(reasons, "; ") + ": topology/block does not allocate them"}
}
