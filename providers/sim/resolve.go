package sim

import (
	"fmt"
	"slices"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// Parse parses and validates a model document. source names the document
// in errors (a file path, or "bundled:NAME"). Every problem is reported as
// a config.FieldError naming the field path (e.g.
// "switches[0].children[1].nodes") and the YAML line; up to 20 are joined.
func Parse(data []byte, source string) (*Model, error) {
	root, err := decodeDocument(data)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", source, err)
	}
	d := &decoder{budget: max(minBudget, budgetFactor*countNodes(root))}
	d.model(root)
	if d.failed() {
		return nil, fmt.Errorf("model %s: %w", source, d.err())
	}
	m := d.resolve()
	if d.failed() {
		return nil, fmt.Errorf("model %s: %w", source, d.err())
	}
	// The checks above cover everything the topology.Builder rejects, with
	// field paths and lines; the Builder stays the backstop in Graph.
	m.source = source
	m.sortNodes()
	return m, nil
}

// sortNodes puts the nodes in natural order of name, once, so that every
// Graph hands them to the Builder already sorted (which it then need not
// sort). Generated models are in that order already.
func (m *Model) sortNodes() {
	byName := func(a, b mnode) int { return hostlist.Compare(a.name, b.name) }
	if slices.IsSortedFunc(m.nodes, byName) {
		return
	}
	slices.SortFunc(m.nodes, byName)
	m.byName = nil // made again on first use (Model.index)
	for i := range m.nodes {
		n := &m.nodes[i]
		if n.instanceID != "" {
			m.byInstance[n.instanceID] = int32(i)
		}
	}
}

// conflict accumulates one kind of problem over the names of one hostlist
// expression, so that a bad range gives one error, not thousands.
type conflict struct {
	first string
	count int
}

func (c *conflict) note(msg string) {
	if c.count == 0 {
		c.first = msg
	}
	c.count++
}

func (c *conflict) report(d *decoder, h *hostExpr) {
	switch {
	case c.count == 1:
		d.add(h.field(), h.line, "%s", c.first)
	case c.count > 1:
		d.add(h.field(), h.line, "%s (and %d more nodes)", c.first, c.count-1)
	}
	*c = conflict{}
}

// expand expands h, reporting a bad expression.
func (d *decoder) expand(h *hostExpr) []string {
	if !h.set() {
		return nil
	}
	names, err := d.expander.Expand(h.expr)
	if err != nil {
		d.add(h.field(), h.line, "bad hostlist %q: %w", h.expr, err)
		return nil
	}
	if d.expanded += len(names); d.expanded > maxNames {
		d.add(h.field(), h.line, "the model lists more than %d names in all", maxNames)
		return nil
	}
	return names
}

// resolver builds the node table of a Model from a decoder's raw items.
type resolver struct {
	*decoder
	m *Model
	// hint is the index of the node after the last one found: domains
	// and node groups mostly list nodes in the order the leaves did, so
	// checking it first saves most map lookups.
	hint int32
	// fresh is set while names are expected to be new (the leaves): node
	// then inserts without looking up first, and falls back to looking up
	// after the first name that was not new.
	fresh bool
	// want is the size of the name index when it is made.
	want int
}

// find returns the index of the named node.
func (r *resolver) find(name string) (int32, bool) {
	if h := r.hint; int(h) < len(r.m.nodes) && r.m.nodes[h].name == name {
		r.hint++
		return h, true
	}
	i, ok := r.index()[name]
	if ok {
		r.hint = i + 1
	}
	return i, ok
}

// index returns the Model's name index, making it from the nodes so far
// on first use: while the leaves list their names in increasing natural
// order, none can be a repeat, and no index is needed.
func (r *resolver) index() map[string]int32 {
	if r.m.byName == nil {
		r.m.byName = make(map[string]int32, max(len(r.m.nodes), r.want))
		for j := range r.m.nodes {
			r.m.byName[r.m.nodes[j].name] = int32(j)
		}
	}
	return r.m.byName
}

// node returns the index of the named node, adding it if new; -1 if the
// name is not a valid node name (noted in bad).
func (r *resolver) node(name string, bad *conflict) int32 {
	i := int32(len(r.m.nodes))
	if r.fresh && r.m.byName == nil && (i == 0 || hostlist.Compare(r.m.nodes[i-1].name, name) < 0) {
		return r.appendNode(name, bad) // after every name so far: new
	}
	if r.fresh {
		r.index()
		before := len(r.m.byName)
		r.m.byName[name] = i
		if len(r.m.byName) == before {
			// Not new after all: put back the index it had, and look up
			// from now on.
			r.fresh = false
			for j := range r.m.nodes {
				r.m.byName[r.m.nodes[j].name] = int32(j)
			}
			return r.node(name, bad)
		}
	} else if j, ok := r.find(name); ok {
		return j
	}
	if i := r.appendNode(name, bad); i >= 0 {
		r.index()[name] = i
		return i
	}
	delete(r.m.byName, name)
	return -1
}

// appendNode appends a node of that name; -1 if the name is not a valid
// node name (noted in bad).
func (r *resolver) appendNode(name string, bad *conflict) int32 {
	if err := topology.CheckNodeName(name); err != nil {
		bad.note(fmt.Sprintf("node %q: %v", name, err))
		return -1
	}
	r.m.nodes = append(r.m.nodes, mnode{name: name, leaf: -1, domain: -1, sub: -1, group: -1})
	return int32(len(r.m.nodes) - 1)
}

// resolve expands every hostlist and builds the Model, reporting
// conflicts (a node under two leaves, in two domains or two node groups,
// duplicate IDs) with the field and line of the later mention.
func (d *decoder) resolve() *Model {
	leafNames := make([][]string, len(d.switches))
	domNames := make([][]string, len(d.domains))
	subNames := make([][][]string, len(d.domains))
	groupNames := make([][]string, len(d.groups))
	groupIDs := make([][]string, len(d.groups))
	var nLeaf, nDom, nGroup, nSubs int
	for i := range d.switches {
		leafNames[i] = d.expand(&d.switches[i].nodes)
		nLeaf += len(leafNames[i])
	}
	for i := range d.domains {
		dom := &d.domains[i]
		domNames[i] = d.expand(&dom.nodes)
		nDom += len(domNames[i])
		subNames[i] = make([][]string, len(dom.subs))
		for j := range dom.subs {
			subNames[i][j] = d.expand(&dom.subs[j].nodes)
		}
		nSubs += len(dom.subs)
	}
	for i := range d.groups {
		g := &d.groups[i]
		groupNames[i] = d.expand(&g.names)
		groupIDs[i] = d.expand(&g.instanceIDs)
		nGroup += len(groupNames[i])
		if g.instanceIDs.set() && groupIDs[i] != nil && len(groupIDs[i]) != len(groupNames[i]) {
			d.add(g.instanceIDs.field(), g.instanceIDs.line,
				"has %d instance IDs for the %d names of %s", len(groupIDs[i]), len(groupNames[i]), g.names.field())
		}
	}
	if d.failed() {
		return nil
	}
	hint := max(nLeaf, nDom, nGroup)
	m := &Model{
		name: d.name, description: d.description, defaults: d.defaults,
		switches: make([]mswitch, len(d.switches)),
		domains:  make([]mdomain, len(d.domains)),
		subs:     make([]msub, 0, nSubs),
		groups:   make([]facts, len(d.groups)),
		nodes:    make([]mnode, 0, hint),
	}
	r := &resolver{decoder: d, m: m, fresh: true, want: hint}
	r.switches(leafNames)
	r.fresh = false
	r.domains(domNames, subNames)
	r.groups(groupNames, groupIDs)
	return m
}

func (r *resolver) switches(leafNames [][]string) {
	seen := make(map[string]int, len(r.decoder.switches))
	var bad, dup conflict
	for i := range r.decoder.switches {
		s := &r.decoder.switches[i]
		if first, ok := seen[s.info.id]; ok {
			f := &r.decoder.switches[first].info
			r.add(join(s.info.path, "id"), s.info.line, "duplicate switch ID %q (first at %s, line %d)", s.info.id, f.path, f.line)
		} else {
			seen[s.info.id] = i
		}
		r.m.switches[i] = mswitch{
			info:   topology.SwitchInfo{ID: s.info.id, DisplayName: s.disp, LinkSpeedGbps: s.speed},
			parent: s.parent,
		}
		for _, name := range leafNames[i] {
			n := r.node(name, &bad)
			switch {
			case n < 0:
			case r.m.nodes[n].leaf >= 0:
				other := &r.decoder.switches[r.m.nodes[n].leaf]
				if int(r.m.nodes[n].leaf) == i {
					dup.note(fmt.Sprintf("node %s is listed twice", name))
				} else {
					dup.note(fmt.Sprintf("node %s is already under switch %q (%s, line %d)", name, other.info.id, other.nodes.field(), other.nodes.line))
				}
			default:
				r.m.nodes[n].leaf = int32(i)
			}
		}
		bad.report(r.decoder, &s.nodes)
		dup.report(r.decoder, &s.nodes)
	}
}

func (r *resolver) domains(domNames [][]string, subNames [][][]string) {
	seen := make(map[string]*rawID, len(r.decoder.domains))
	seenSub := make(map[string]*rawID)
	var bad, dup conflict
	for i := range r.decoder.domains {
		dom := &r.decoder.domains[i]
		if first, ok := seen[dom.id]; ok {
			r.add(join(dom.path, "id"), dom.line, "duplicate domain ID %q (first at %s, line %d)", dom.id, first.path, first.line)
		} else {
			seen[dom.id] = &dom.rawID
		}
		r.m.domains[i] = mdomain{id: dom.id}
		for _, name := range domNames[i] {
			if n := r.node(name, &bad); n >= 0 {
				r.joinDomain(n, int32(i), &dup)
			}
		}
		bad.report(r.decoder, &dom.nodes)
		dup.report(r.decoder, &dom.nodes)
		for j := range dom.subs {
			sub := &dom.subs[j]
			if first, ok := seenSub[sub.id]; ok {
				r.add(join(sub.path, "id"), sub.line, "duplicate sub-domain ID %q (first at %s, line %d)", sub.id, first.path, first.line)
			} else {
				seenSub[sub.id] = &sub.rawID
			}
			si := int32(len(r.m.subs))
			r.m.subs = append(r.m.subs, msub{id: sub.id, domain: int32(i)})
			r.subDomain(dom, int32(i), si, subNames[i][j], &sub.nodes)
		}
	}
}

// joinDomain puts node n in domain di, noting a node already in another.
func (r *resolver) joinDomain(n, di int32, dup *conflict) bool {
	node := &r.m.nodes[n]
	switch {
	case node.domain == di:
		dup.note(fmt.Sprintf("node %s is listed twice", node.name))
		return false
	case node.domain >= 0:
		other := &r.decoder.domains[node.domain]
		dup.note(fmt.Sprintf("node %s is already in domain %q (%s, line %d)", node.name, other.id, other.nodes.field(), other.nodes.line))
		return false
	}
	node.domain = di
	return true
}

// subDomain places the names of sub-domain si of domain dom (index di).
// When the domain lists its nodes, the sub-domain's must be among them;
// otherwise the sub-domains make up the domain.
func (r *resolver) subDomain(dom *rawDomain, di, si int32, names []string, h *hostExpr) {
	var bad, dup, outside conflict
	for _, name := range names {
		var n int32
		if dom.nodes.set() {
			var ok bool
			if n, ok = r.find(name); !ok || r.m.nodes[n].domain != di {
				outside.note(fmt.Sprintf("node %s is not among the nodes of domain %q (%s)", name, dom.id, dom.nodes.field()))
				continue
			}
		} else if n = r.node(name, &bad); n < 0 || (r.m.nodes[n].domain != di && !r.joinDomain(n, di, &dup)) {
			continue
		}
		node := &r.m.nodes[n]
		if node.sub >= 0 {
			dup.note(fmt.Sprintf("node %s is already in sub-domain %q", name, r.m.subs[node.sub].id))
			continue
		}
		node.sub = si
	}
	bad.report(r.decoder, h)
	dup.report(r.decoder, h)
	outside.report(r.decoder, h)
}

func (r *resolver) groups(groupNames, groupIDs [][]string) {
	var bad, dup, dupID conflict
	for i := range r.decoder.groups {
		g := &r.decoder.groups[i]
		r.m.groups[i] = g.facts
		ids := groupIDs[i]
		if len(ids) > 0 && r.m.byInstance == nil {
			r.m.byInstance = make(map[string]int32, len(ids))
		}
		for j, name := range groupNames[i] {
			n := r.node(name, &bad)
			if n < 0 {
				continue
			}
			node := &r.m.nodes[n]
			if node.group >= 0 {
				other := &r.decoder.groups[node.group]
				dup.note(fmt.Sprintf("node %s is already in node group %s (line %d)", name, other.path, other.line))
				continue
			}
			node.group = int32(i)
			if j >= len(ids) {
				continue
			}
			if prev, ok := r.m.byInstance[ids[j]]; ok {
				dupID.note(fmt.Sprintf("instance ID %q of node %s is also node %s's", ids[j], name, r.m.nodes[prev].name))
				continue
			}
			node.instanceID = ids[j]
			r.m.byInstance[ids[j]] = n
		}
		bad.report(r.decoder, &g.names)
		dup.report(r.decoder, &g.names)
		dupID.report(r.decoder, &g.instanceIDs)
	}
}
