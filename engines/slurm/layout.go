package slurm

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// blockSlot is one BlockName line: an accelerator domain, or an empty
// padding block (nodes == nil).
type blockSlot struct {
	name  string
	id    string   // the domain's provider ID; "" for padding
	nodes []string // natural order; nil for padding
	owner int32    // the group the slot belongs to
}

func (s *blockSlot) padding() bool { return s.nodes == nil }

// blockGroup is a switch that has blocks below it; group 0 is a virtual
// root above every root switch, which also holds the domains none of whose
// nodes is under a switch.
type blockGroup struct {
	name     string // switch name; "" for the virtual root
	parent   int32  // -1 for the virtual root
	depth    int32
	children []int32 // child groups, fabric order
	domains  []int32 // indexes into layout.doms, fabric order
	padded   int     // length in a padded layout (measure)
	pads     int     // padding blocks named after this group so far
	start    int     // first slot (computed by intervals)
	end      int     // one past the last slot
}

// fabricDomain is a domain with its nodes (after any node filter) and the
// node that places it in the fabric: the first one a depth-first walk of
// the switch tree meets.
type fabricDomain struct {
	d     *topology.Domain
	nodes []string
	home  string // "" when no node is under a switch
	leaf  string // the switch ID above home
	pos   int    // depth-first position of leaf; MaxInt without one
}

// layout assigns blocks to positions so that aggregates follow switches.
type layout struct {
	g      *topology.Graph
	doms   []fabricDomain
	groups []blockGroup
	slots  []blockSlot
	names  map[string]bool // every block name so far, to keep padding names apart
}

// orderDomains returns the domains of g that keep at least one node under
// include, in fabric order: by the depth-first position of the leaf where
// the walk first meets them, then by that first node; domains with no node
// under a switch last, by name. Without a filter this is exactly
// Graph.DomainsInFabricOrder. It reads each node once, in g.Nodes() order,
// and looks up only the small switch and domain tables.
func orderDomains(g *topology.Graph, include func(string) bool) []fabricDomain {
	leafPos := leafPositions(g)
	all := g.Domains()
	out := make([]fabricDomain, len(all))
	byID := make(map[string]int, len(all))
	for i := range all {
		out[i] = fabricDomain{d: &all[i], pos: math.MaxInt}
		if include == nil {
			out[i].nodes = all[i].Nodes
		}
		byID[all[i].ID] = i
	}
	nodes := g.Nodes()
	// Neighbouring nodes usually share a domain and a leaf: remember the
	// last lookups.
	lastDom, lastLeaf, di, pos := "", "", 0, 0
	for k := range nodes {
		n := &nodes[k]
		if n.Domain == "" || include != nil && !include(n.Name) {
			continue
		}
		if n.Domain != lastDom {
			lastDom, di = n.Domain, byID[n.Domain]
		}
		fd := &out[di]
		if include != nil {
			fd.nodes = append(fd.nodes, n.Name)
		}
		if n.Leaf == "" {
			continue
		}
		if n.Leaf != lastLeaf {
			lastLeaf, pos = n.Leaf, leafPos[n.Leaf]
		}
		// Nodes come in natural order, so the first node seen on a leaf
		// is the first one the walk meets there.
		if pos < fd.pos {
			fd.pos, fd.home, fd.leaf = pos, n.Name, n.Leaf
		}
	}
	kept := out[:0]
	for i := range out {
		if len(out[i].nodes) > 0 {
			kept = append(kept, out[i])
		}
	}
	slices.SortStableFunc(kept, func(a, b fabricDomain) int {
		switch {
		case a.pos != b.pos:
			return cmp.Compare(a.pos, b.pos)
		case a.home == b.home:
			return 0
		}
		return hostlist.Compare(a.home, b.home)
	})
	return kept
}

// leafPositions numbers the switches in the depth-first order of
// Graph.DomainsInFabricOrder: roots in natural order, children in natural
// order.
func leafPositions(g *topology.Graph) map[string]int {
	pos := make(map[string]int, len(g.Switches()))
	stack := make([]string, 0, 64)
	roots := g.Roots()
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, roots[i].ID)
	}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		pos[id] = len(pos)
		s, _ := g.Switch(id)
		for i := len(s.Children) - 1; i >= 0; i-- {
			stack = append(stack, s.Children[i])
		}
	}
	return pos
}

// newLayout groups the ordered domains under the switches above their home
// nodes.
func newLayout(g *topology.Graph, doms []fabricDomain) *layout {
	l := &layout{g: g, doms: doms, names: make(map[string]bool, len(doms))}
	l.groups = append(l.groups, blockGroup{parent: -1})
	bySwitch := make(map[string]int32)
	var path []*topology.Switch
	lastLeaf, lastGroup := "", int32(0)
	for i := range doms {
		l.names[doms[i].d.Name] = true
		gi := int32(0)
		switch doms[i].leaf {
		case "":
		case lastLeaf:
			gi = lastGroup
		default:
			path = path[:0]
			for id := doms[i].leaf; id != ""; {
				s, _ := g.Switch(id)
				path = append(path, s)
				id = s.Parent
			}
			for k := len(path) - 1; k >= 0; k-- { // root first
				s := path[k]
				child, ok := bySwitch[s.ID]
				if !ok {
					child = int32(len(l.groups))
					l.groups = append(l.groups, blockGroup{name: s.Name, parent: gi, depth: l.groups[gi].depth + 1})
					l.groups[gi].children = append(l.groups[gi].children, child)
					bySwitch[s.ID] = child
				}
				gi = child
			}
			lastLeaf, lastGroup = doms[i].leaf, gi
		}
		l.groups[gi].domains = append(l.groups[gi].domains, int32(i))
	}
	return l
}

// largestFabric returns the number of domains under the root switch that
// has the most of them; 0 when no domain is under a switch.
func (l *layout) largestFabric() int {
	count := make([]int, len(l.groups))
	for gi := len(l.groups) - 1; gi > 0; gi-- { // children come after parents
		count[gi] += len(l.groups[gi].domains)
		count[l.groups[gi].parent] += count[gi]
	}
	most := 0
	for _, c := range l.groups[0].children {
		most = max(most, count[c])
	}
	return most
}

// placeInOrder lays the domains out one after the other (no padding).
func (l *layout) placeInOrder() {
	l.slots = make([]blockSlot, 0, len(l.doms))
	owner := make([]int32, len(l.doms))
	for gi := range l.groups {
		for _, d := range l.groups[gi].domains {
			owner[d] = int32(gi)
		}
	}
	for i := range l.doms {
		l.slots = append(l.slots, l.domainSlot(int32(i), owner[i]))
	}
	l.intervals()
}

// placePadded lays the domains out so that every group starts at a
// multiple of min(its padded length, limit) and owns that many slots,
// filling gaps with empty blocks. Any aligned run of at most limit blocks
// (a power of two) then either lies inside one group or covers whole
// groups. Trailing padding at the very end is dropped.
func (l *layout) placePadded(limit int) {
	l.measure(0, limit)
	l.slots = make([]blockSlot, 0, l.groups[0].padded)
	l.emit(0, limit)
	for len(l.slots) > 0 && l.slots[len(l.slots)-1].padding() {
		l.slots = l.slots[:len(l.slots)-1]
	}
	l.intervals()
}

// measure computes the padded length of group gi and its subtree.
func (l *layout) measure(gi int32, limit int) int {
	off := 0
	for _, c := range l.groups[gi].children {
		p := l.measure(c, limit)
		al := min(p, limit)
		off = (off+al-1)/al*al + p
	}
	off += len(l.groups[gi].domains)
	l.groups[gi].padded = padTo(off, limit)
	return l.groups[gi].padded
}

// emit appends the slots of group gi (its children, each aligned and
// padded to its length, then its own domains).
func (l *layout) emit(gi int32, limit int) {
	for _, c := range l.groups[gi].children {
		al := min(l.groups[c].padded, limit)
		for len(l.slots)%al != 0 {
			l.slots = append(l.slots, l.padSlot(gi))
		}
		end := len(l.slots) + l.groups[c].padded
		l.emit(c, limit)
		for len(l.slots) < end {
			l.slots = append(l.slots, l.padSlot(c))
		}
	}
	for _, d := range l.groups[gi].domains {
		l.slots = append(l.slots, l.domainSlot(d, gi))
	}
}

func (l *layout) domainSlot(i, owner int32) blockSlot {
	d := &l.doms[i]
	return blockSlot{name: d.d.Name, id: d.d.ID, nodes: d.nodes, owner: owner}
}

// padSlot returns an empty block owned by group gi, named after it:
// "<switch>-pad<k>" ("pad<k>" for the virtual root), never a domain's name.
func (l *layout) padSlot(gi int32) blockSlot {
	grp := &l.groups[gi]
	for {
		grp.pads++
		suffix := "pad" + strconv.Itoa(grp.pads)
		name := suffix
		if grp.name != "" {
			prefix := grp.name
			if room := topology.MaxNameLen - len(suffix) - 1; len(prefix) > room {
				prefix = prefix[:room]
			}
			name = prefix + "-" + suffix
		}
		if !l.names[name] { // a cut prefix can repeat: keep every name unique
			l.names[name] = true
			return blockSlot{name: name, owner: gi}
		}
	}
}

// intervals sets each group's [start, end) from the slots it owns.
func (l *layout) intervals() {
	for gi := range l.groups {
		l.groups[gi].start, l.groups[gi].end = math.MaxInt, -1
	}
	for i := range l.slots {
		for g := l.slots[i].owner; g >= 0; g = l.groups[g].parent {
			grp := &l.groups[g]
			grp.start = min(grp.start, i)
			grp.end = max(grp.end, i+1)
		}
	}
}

// splits reports the first aggregate that takes part of a group together
// with blocks outside it, and that group; ok is true when none does.
func (l *layout) splits(aggs []aggregate) (bad aggregate, group int32, ok bool) {
	for _, a := range aggs {
		ga, gb := l.slots[a.start].owner, l.slots[a.end-1].owner
		ca, cb := int32(-1), int32(-1)
		for l.groups[ga].depth > l.groups[gb].depth {
			ca, ga = ga, l.groups[ga].parent
		}
		for l.groups[gb].depth > l.groups[ga].depth {
			cb, gb = gb, l.groups[gb].parent
		}
		for ga != gb {
			ca, cb = ga, gb
			ga, gb = l.groups[ga].parent, l.groups[gb].parent
		}
		if ca >= 0 && l.groups[ca].start != a.start {
			return a, ca, false
		}
		if cb >= 0 && l.groups[cb].end != a.end {
			return a, cb, false
		}
	}
	return aggregate{}, -1, true
}

// describeSplit explains, for error messages, how aggregate a splits group gi.
func (l *layout) describeSplit(a aggregate, gi int32) string {
	grp := &l.groups[gi]
	return fmt.Sprintf("blocks %s..%s (indexes %d-%d) would take part of switch %q (blocks %s..%s) together with blocks outside it",
		l.slots[a.start].name, l.slots[a.end-1].name, a.start, a.end-1, grp.name,
		l.slots[grp.start].name, l.slots[grp.end-1].name)
}
