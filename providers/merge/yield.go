package merge

import (
	"slices"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// Reasons the merge drops a yielding source's facts (Source.OnConflict).
const (
	// DropConflict is a node whose facts from a yielding source disagree
	// with another source's.
	DropConflict = "conflict"
	// DropUnknownNode is a node only yielding sources know: it is left
	// out until a provider that is not one, or the request, knows it.
	DropUnknownNode = "unknown_node"
)

// reportDrops settles what yielding sources alone say: a node only they
// know is left out (when another source is merged), and a path of theirs
// that puts a switch under another parent, or at another level, than the
// other sources' paths do is dropped. It logs and counts what was
// dropped, by source, and returns the entries to build.
func (p *Provider) reportDrops(m *merger) []*entry {
	unknown := map[int][]string{}
	trusted := slices.Contains(m.yields, false)
	kept := m.entries[:0:0]
	for _, e := range m.entries {
		onlyYielding := !e.requested && len(e.seenBy) > 0
		for i := range e.seenBy {
			onlyYielding = onlyYielding && m.yield(i)
		}
		if trusted && onlyYielding {
			for i := range e.seenBy {
				unknown[i] = append(unknown[i], e.node.Name)
			}
			continue
		}
		kept = append(kept, e)
	}
	// Where the paths of sources that do not yield put each switch.
	type place struct {
		parent string
		level  int
	}
	at := map[string]place{}
	for _, e := range kept {
		if len(e.path) > 0 && !m.yield(e.pathIdx) {
			for j, s := range e.path {
				pl := place{level: j}
				if j+1 < len(e.path) {
					pl.parent = e.path[j+1].ID
				}
				at[s.ID] = pl
			}
		}
	}
	for _, e := range kept {
		if len(e.path) == 0 || !m.yield(e.pathIdx) {
			continue
		}
		for j, s := range e.path {
			pl := place{level: j}
			if j+1 < len(e.path) {
				pl.parent = e.path[j+1].ID
			}
			if have, ok := at[s.ID]; ok && have != pl {
				m.dropped[e.pathIdx] = append(m.dropped[e.pathIdx], e.node.Name)
				e.path = nil
				break
			}
		}
		for j, s := range e.path { // the yielding paths kept must agree among themselves too
			pl := place{level: j}
			if j+1 < len(e.path) {
				pl.parent = e.path[j+1].ID
			}
			at[s.ID] = pl
		}
	}
	p.logDrops(DropUnknownNode, unknown)
	return kept
}

// build adds the kept entries to a builder: every node, then the
// placements of the sources that do not yield, then those of the
// yielding sources (node agents' reports), each tried
// (topology.Builder.TryAddPath, TryAddToDomain) and dropped when it would
// make the graph unbuildable (a switch or domain named like another once
// names are made safe, a switch named like a node, a rack in two
// domains), so that no one node's report can fail the discovery. It logs
// and counts every drop.
func (p *Provider) build(m *merger) *topology.Builder {
	b := topology.NewBuilder()
	b.Grow(len(m.entries))
	for _, e := range m.entries {
		b.AddNode(e.node)
	}
	for _, e := range m.entries {
		if len(e.path) > 0 && !m.yield(e.pathIdx) {
			b.AddPath(e.node.Name, e.path)
		}
		if e.domain != "" && !m.yield(e.domIdx) {
			b.AddToDomain(e.node.Name, e.domain, e.sub)
		}
	}
	var problems []string
	drop := func(e *entry, idx int, err error) {
		m.dropped[idx] = append(m.dropped[idx], e.node.Name)
		if len(problems) < maxReported {
			problems = append(problems, err.Error())
		}
	}
	for _, e := range m.entries {
		if len(e.path) > 0 && m.yield(e.pathIdx) {
			if err := b.TryAddPath(e.node.Name, e.path); err != nil {
				drop(e, e.pathIdx, err)
			}
		}
		if e.domain != "" && m.yield(e.domIdx) {
			if err := b.TryAddToDomain(e.node.Name, e.domain, e.sub); err != nil {
				drop(e, e.domIdx, err)
			}
		}
	}
	for _, line := range problems {
		p.log.Warn("merge: dropped a yielding source's placement the graph cannot take", "problem", line)
	}
	p.logDrops(DropConflict, m.dropped)
	return b
}

// logDrops warns, per source, of the nodes whose facts were dropped for
// reason, and counts them.
func (p *Provider) logDrops(reason string, bySource map[int][]string) {
	counter, _ := p.obs.(providers.DropObserver)
	for i, nodes := range bySource {
		nodes = slices.Compact(slices.Sorted(slices.Values(nodes)))
		hostlist.Sort(nodes)
		p.log.Warn("merge: dropped a yielding source's facts of nodes", "source", p.children[i].name, "reason", reason,
			"count", len(nodes), "nodes", hostlist.Compress(nodes))
		if counter != nil {
			counter.Dropped(Name, reason, len(nodes))
		}
	}
}
