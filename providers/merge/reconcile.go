package merge

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// maxReported caps how many conflicts one error lists.
const maxReported = 20

// entry is a node of the merged graph and where its facts came from.
type entry struct {
	node     topology.Node
	from     map[string]string // identity field -> source that set it
	fromIdx  map[string]int    // identity field -> index of that source (-1: the request)
	path     []topology.SwitchInfo
	pathFrom string
	pathIdx  int
	domain   string
	sub      string
	domFrom  string
	subFrom  string
	domIdx   int
	seenBy   map[int]string // source index -> that source's node name
	placedBy map[int]bool   // source index -> placed in what it contributes
	// requested is set for a node the request names.
	requested bool
}

// merger accumulates the merged nodes.
type merger struct {
	cfg        *Config
	entries    []*entry
	byName     map[string]*entry
	byInstance map[string]*entry
	conflicts  []error
	// yields marks the sources whose facts give way on a conflict
	// (Source.OnConflict); dropped lists, by source, the nodes whose
	// facts from it gave way.
	yields  []bool
	dropped map[int][]string
}

// yield reports whether source i gives way on a conflict.
func (m *merger) yield(i int) bool { return i >= 0 && i < len(m.yields) && m.yields[i] }

// resolveConflict settles a conflict between the current value (from
// source had) and a new one (from source got): it reports whether the new
// value replaces the current one. When one of them yields, its facts of
// the node are dropped (listed); otherwise it is a conflict.
func (m *merger) resolveConflict(e *entry, had, got int, format string, args ...any) bool {
	switch {
	case m.yield(got):
		m.dropped[got] = append(m.dropped[got], e.node.Name)
		return false
	case m.yield(had):
		m.dropped[had] = append(m.dropped[had], e.node.Name)
		return true
	}
	m.conflict(format, args...)
	return false
}

func (m *merger) add(name string) *entry {
	e := &entry{node: topology.Node{Name: name}, from: map[string]string{}, fromIdx: map[string]int{}, seenBy: map[int]string{}, placedBy: map[int]bool{}}
	m.entries = append(m.entries, e)
	m.byName[name] = e
	return e
}

// find returns the merged node that a source's node n is.
func (m *merger) find(n *topology.Node) *entry {
	byName, byID := m.byName[n.Name], m.byInstance[n.InstanceID]
	if n.InstanceID == "" {
		byID = nil
	}
	switch m.cfg.Match {
	case MatchName:
		return byName
	case MatchInstanceID:
		if byID != nil {
			return byID
		}
		return byName
	}
	if byName != nil {
		return byName
	}
	return byID
}

func (m *merger) conflict(format string, args ...any) {
	m.conflicts = append(m.conflicts, fmt.Errorf(format+": %w", append(args, ErrConflict)...))
}

// identity merges the identity fields of a source's node into e.
func (m *merger) identity(e *entry, n *topology.Node, i int, src string) {
	set := func(field string, dst *string, v string) {
		switch {
		case v == "" || *dst == v:
		case *dst == "" || m.resolveConflict(e, e.fromIdx[field], i, "node %q: %s is %q from %s but %q from %s", e.node.Name, field, *dst, e.from[field], v, src):
			*dst = v
			e.from[field], e.fromIdx[field] = src, i
		}
	}
	set("instance ID", &e.node.InstanceID, n.InstanceID)
	if e.node.InstanceID != "" && m.byInstance[e.node.InstanceID] == nil {
		m.byInstance[e.node.InstanceID] = e
	}
	set("region", &e.node.Region, n.Region)
	set("zone", &e.node.Zone, n.Zone)
	if n.GPUs != 0 {
		gpus := fmt.Sprint(n.GPUs)
		old := ""
		if e.node.GPUs != 0 {
			old = fmt.Sprint(e.node.GPUs)
		}
		set("GPU count", &old, gpus)
		if old == gpus {
			e.node.GPUs = n.GPUs
		}
	}
	for _, k := range slices.Sorted(maps.Keys(n.Attributes)) {
		if e.node.Attributes == nil {
			e.node.Attributes = map[string]string{}
		}
		v := e.node.Attributes[k]
		set("attribute "+k, &v, n.Attributes[k])
		e.node.Attributes[k] = v
	}
}

// place merges the placement of a source's node into e.
func (m *merger) place(e *entry, g *topology.Graph, n *topology.Node, i int, src string) {
	if m.cfg.uses(i, UseTree) && n.Leaf != "" {
		e.placedBy[i] = true
		path := g.PathInfo(n.Name)
		switch {
		case e.path == nil:
			e.path, e.pathFrom, e.pathIdx = path, src, i
		case e.path[0].ID != n.Leaf:
			if m.resolveConflict(e, e.pathIdx, i, "node %q: under switch %q from %s but under %q from %s", e.node.Name, e.path[0].ID, e.pathFrom, n.Leaf, src) {
				e.path, e.pathFrom, e.pathIdx = path, src, i
			}
		}
	}
	if m.cfg.uses(i, UseDomains) && n.Domain != "" {
		e.placedBy[i] = true
		switch {
		case e.domain == "":
			e.domain, e.sub, e.domFrom, e.subFrom, e.domIdx = n.Domain, n.SubDomain, src, src, i
		case e.domain != n.Domain:
			if m.resolveConflict(e, e.domIdx, i, "node %q: in domain %q from %s but in %q from %s", e.node.Name, e.domain, e.domFrom, n.Domain, src) {
				e.domain, e.sub, e.domFrom, e.subFrom, e.domIdx = n.Domain, n.SubDomain, src, src, i
			}
		case n.SubDomain == "" || e.sub == n.SubDomain:
		case e.sub == "":
			e.sub, e.subFrom = n.SubDomain, src
		default:
			if m.resolveConflict(e, e.domIdx, i, "node %q: in sub-domain %q of %q from %s but in %q from %s", e.node.Name, e.sub, e.domain, e.subFrom, n.SubDomain, src) {
				e.sub, e.subFrom, e.domIdx = n.SubDomain, src, i
			}
		}
	}
}

// merge reconciles the sources' graphs (in source order) into one.
func (p *Provider) merge(req providers.Request, graphs []*topology.Graph) (*topology.Graph, error) {
	m := &merger{cfg: &p.cfg, byName: map[string]*entry{}, byInstance: map[string]*entry{}, dropped: map[int][]string{}}
	for i := range p.children {
		m.yields = append(m.yields, p.cfg.yields(i))
	}
	for _, ref := range req.Nodes {
		if _, dup := m.byName[ref.Name]; dup {
			continue
		}
		e := m.add(ref.Name)
		e.requested = true
		m.identity(e, &topology.Node{InstanceID: ref.InstanceID, Region: ref.Region}, -1, "the request")
	}
	for i, g := range graphs {
		src := fmt.Sprintf("source %q", p.children[i].name)
		for j := range g.Nodes() {
			n := &g.Nodes()[j]
			e := m.find(n)
			if e == nil {
				e = m.add(n.Name)
			}
			if other, dup := e.seenBy[i]; dup {
				m.conflict("node %q: nodes %q and %q of %s both match it", e.node.Name, other, n.Name, src)
				continue
			}
			e.seenBy[i] = n.Name
			m.identity(e, n, i, src)
			m.place(e, g, n, i, src)
		}
	}
	if err := p.resolve(m); err != nil {
		return nil, err
	}
	m.entries = p.reportDrops(m)
	if err := p.unknown(m); err != nil {
		return nil, err
	}
	g, err := p.build(m).Build()
	if err != nil {
		return nil, fmt.Errorf("merge: build graph (do two tree sources disagree about a switch?): %w", err)
	}
	return g, nil
}

// resolve applies the conflict policy.
func (p *Provider) resolve(m *merger) error {
	if len(m.conflicts) == 0 {
		return nil
	}
	if p.cfg.Conflicts == ConflictsFirst {
		for _, c := range m.conflicts {
			p.log.Warn("merge: conflict, keeping the earlier source", "conflict", c.Error())
		}
		return nil
	}
	errs := m.conflicts
	if len(errs) > maxReported {
		errs = append(errs[:maxReported:maxReported], fmt.Errorf("and %d more conflicts", len(m.conflicts)-maxReported))
	}
	return fmt.Errorf("merge: %d conflicts (conflicts: %s; set conflicts: %s to keep the earlier source): %w",
		len(m.conflicts), ConflictsError, ConflictsFirst, errors.Join(errs...))
}

// unknown applies each source's unknownNodes policy to the nodes it does
// not know or places nowhere in what it contributes.
func (p *Provider) unknown(m *merger) error {
	var errs []error
	for i, c := range p.children {
		policy := p.cfg.unknownPolicy(i)
		if policy == UnknownIgnore {
			continue
		}
		var missing []string
		for _, e := range m.entries {
			if !e.placedBy[i] {
				missing = append(missing, e.node.Name)
			}
		}
		if len(missing) == 0 {
			continue
		}
		hostlist.Sort(missing)
		list := hostlist.Compress(missing)
		if policy == UnknownError {
			errs = append(errs, fmt.Errorf("source %q does not know or place %d nodes: %s: %w", c.name, len(missing), list, ErrUnknownNode))
			continue
		}
		p.log.Warn("merge: nodes unknown to a source, or placed nowhere by it", "source", c.name, "count", len(missing), "nodes", list)
	}
	if len(errs) > 0 {
		return fmt.Errorf("merge: %w", errors.Join(errs...))
	}
	return nil
}
