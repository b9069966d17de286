package topology

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// maxReportedErrors caps how many problems Build lists before summarizing.
const maxReportedErrors = 20

// SwitchInfo declares a switch to a Builder.
type SwitchInfo struct {
	// ID is the provider's own identifier; required.
	ID string
	// DisplayName is an optional human name.
	DisplayName string
	// LinkSpeedGbps is the uplink speed in Gb/s; 0 when unknown.
	LinkSpeedGbps uint32
}

// Builder assembles a Graph. Its methods record problems instead of
// failing early; Build reports them all. A Builder is not safe for
// concurrent use.
type Builder struct {
	// nodes holds each declared node in the order added (so input that is
	// already sorted sorts in O(n)); Leaf, Domain and SubDomain record the
	// placements made so far. index maps a name to its position; it is
	// nil while the nodes have come in strictly increasing natural order,
	// which rules out a repeat, and the node looked up is the last one
	// added or the one after the last found: it is made on the first
	// other use (indexed), so that a provider that adds its nodes sorted,
	// each with its placements, makes none, nor does a reader that places
	// them in the order they were added. want is the size Grow announced.
	nodes     []Node
	index     map[string]int
	next      int // the position after the node that node() found last
	want      int
	built     bool
	switches  map[string]SwitchInfo
	parent    map[string]string // child switch ID -> parent switch ID
	problems  []error
	extraErrs int
	// The indexes of TryAddPath and TryAddToDomain, made on their first
	// use (indexNames) and kept up to date from then on: the switch
	// and domain IDs by safe name, the switches with child switches and
	// with nodes, and each sub-domain's domain.
	swNames, domNames  map[string]string
	hasChild, hasNodes map[string]bool
	subOf              map[string]string
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{
		switches: make(map[string]SwitchInfo),
		parent:   make(map[string]string),
	}
}

func (b *Builder) fail(err error) {
	if len(b.problems) < maxReportedErrors {
		b.problems = append(b.problems, err)
		return
	}
	b.extraErrs++
}

// AddNode declares a node. Adding the same node again with identical data
// is allowed; different data is an error. Leaf, Domain and SubDomain are
// ignored: use AttachNode, AddPath and AddToDomain.
func (b *Builder) AddNode(n Node) { b.addNode(n, true) }

// addNode is AddNode; with clone unset, the Builder takes n's Attributes map
// as it is instead of a copy (the caller gives it up).
func (b *Builder) addNode(n Node, clone bool) {
	if err := CheckNodeName(n.Name); err != nil {
		b.fail(fmt.Errorf("node %q: %w", n.Name, err))
		return
	}
	n.Leaf, n.Domain, n.SubDomain = "", "", ""
	if clone {
		n.Attributes = maps.Clone(n.Attributes)
	}
	if b.index == nil && (len(b.nodes) == 0 || naturalCmp(b.nodes[len(b.nodes)-1].Name, n.Name) < 0) {
		b.nodes = append(b.nodes, n)
		return
	}
	if i, ok := b.indexed()[n.Name]; ok {
		if !sameNode(&b.nodes[i], &n) {
			b.fail(fmt.Errorf("node %q: %w", n.Name, ErrDuplicateNode))
		}
		return
	}
	b.index[n.Name] = len(b.nodes)
	b.nodes = append(b.nodes, n)
}

func sameNode(a, b *Node) bool {
	return a.InstanceID == b.InstanceID && a.Region == b.Region && a.Zone == b.Zone &&
		a.GPUs == b.GPUs && maps.Equal(a.Attributes, b.Attributes)
}

// Grow makes room for n more nodes, so that a provider that knows the
// size of the cluster avoids repeated growth.
func (b *Builder) Grow(n int) {
	b.nodes = slices.Grow(b.nodes, n)
	b.want = len(b.nodes) + n
}

// indexed returns the index of the nodes' names, making it on first use.
func (b *Builder) indexed() map[string]int {
	if b.index == nil {
		b.index = make(map[string]int, max(len(b.nodes), b.want))
		for i := range b.nodes {
			b.index[b.nodes[i].Name] = i
		}
	}
	return b.index
}

func (b *Builder) node(name string) (*Node, bool) {
	if k := len(b.nodes) - 1; k >= 0 && b.nodes[k].Name == name {
		return &b.nodes[k], true
	}
	// Nodes are mostly looked up in the order they were added (a switch's
	// or a domain's nodes, one after another): try the one after the
	// node found last before making or asking the index.
	if k := b.next; k < len(b.nodes) && b.nodes[k].Name == name {
		b.next = k + 1
		return &b.nodes[k], true
	}
	i, ok := b.indexed()[name]
	if !ok {
		return nil, false
	}
	b.next = i + 1
	return &b.nodes[i], true
}

// AddSwitch declares a switch. Declaring it again with identical data is
// allowed; a different display name or link speed is an error.
func (b *Builder) AddSwitch(s SwitchInfo) {
	if s.ID == "" {
		b.fail(fmt.Errorf("switch: %w", ErrEmptyName))
		return
	}
	if old, ok := b.switches[s.ID]; ok {
		if old != s {
			b.fail(fmt.Errorf("switch %q declared twice with different data: %w", s.ID, ErrDuplicateSwitch))
		}
		return
	}
	b.switches[s.ID] = s
	if b.swNames != nil {
		if name := SafeName(s.ID); b.swNames[name] == "" {
			b.swNames[name] = s.ID
		}
	}
}

// Link makes child a child switch of parent. Both must be declared by the
// time Build runs.
func (b *Builder) Link(parent, child string) {
	if old, ok := b.parent[child]; ok {
		if old != parent {
			b.fail(fmt.Errorf("switch %q under %q and %q: %w", child, old, parent, ErrTwoParents))
		}
		return
	}
	b.parent[child] = parent
	if b.hasChild != nil {
		b.hasChild[parent] = true
	}
}

// AttachNode puts a declared node directly under a switch.
func (b *Builder) AttachNode(switchID, node string) {
	n, ok := b.node(node)
	switch {
	case !ok:
		b.fail(fmt.Errorf("switch %q: node %q: %w", switchID, node, ErrUnknownNode))
	case n.Leaf == "":
		n.Leaf = switchID
		if b.hasNodes != nil {
			b.hasNodes[switchID] = true
		}
	case n.Leaf != switchID:
		b.fail(fmt.Errorf("node %q under %q and %q: %w", node, n.Leaf, switchID, ErrTwoLeaves))
	}
}

// AddPath places a declared node under a chain of switches given closest
// first: path[0] is the node's leaf switch, path[1] its parent, and so on.
// The switches are declared as by AddSwitch.
func (b *Builder) AddPath(node string, path []SwitchInfo) {
	for i, s := range path {
		b.AddSwitch(s)
		if i > 0 {
			b.Link(s.ID, path[i-1].ID)
		}
	}
	if len(path) > 0 {
		b.AttachNode(path[0].ID, node)
	}
}

// AddToDomain puts a declared node in an accelerator domain and,
// when subDomain is not empty, in one of its sub-domains.
func (b *Builder) AddToDomain(node, domain, subDomain string) {
	if domain == "" {
		b.fail(fmt.Errorf("node %q: domain: %w", node, ErrEmptyName))
		return
	}
	n, ok := b.node(node)
	switch {
	case !ok:
		b.fail(fmt.Errorf("domain %q: node %q: %w", domain, node, ErrUnknownNode))
	case n.Domain == "":
		n.Domain, n.SubDomain = domain, subDomain
		if b.domNames != nil {
			b.noteNode(n)
		}
	case n.Domain != domain || n.SubDomain != subDomain:
		b.fail(fmt.Errorf("node %q in %s and %s: %w", node,
			domainLabel(n.Domain, n.SubDomain), domainLabel(domain, subDomain), ErrTwoDomains))
	}
}

func domainLabel(domain, sub string) string {
	if sub == "" {
		return fmt.Sprintf("%q", domain)
	}
	return fmt.Sprintf("%q/%q", domain, sub)
}

// Build validates what was added and returns the Graph, or an error that
// joins every problem found (each wrapping one of the package's sentinel
// errors). The graph takes over the Builder's storage: Build may be called
// once, and the Builder must not be used afterwards.
func (b *Builder) Build() (*Graph, error) {
	if b.built {
		return nil, errors.New("topology: Builder.Build called twice")
	}
	b.built = true
	b.checkReferences()
	if len(b.problems) == 0 {
		b.checkCycles()
	}
	if len(b.problems) > 0 {
		errs := slices.Clone(b.problems)
		if b.extraErrs > 0 {
			errs = append(errs, fmt.Errorf("and %d more problems", b.extraErrs))
		}
		return nil, errors.Join(errs...)
	}
	g := &Graph{}
	g.buildNodes(b)
	if err := g.buildSwitches(b); err != nil {
		return nil, err
	}
	if err := g.buildDomains(b); err != nil {
		return nil, err
	}
	return g, nil
}

// checkReferences reports links and memberships that name undeclared
// switches or nodes, and switches with both nodes and child switches.
func (b *Builder) checkReferences() {
	hasChild := make(map[string]bool, len(b.parent))
	for _, child := range sortedKeys(b.parent) {
		parent := b.parent[child]
		if _, ok := b.switches[child]; !ok {
			b.fail(fmt.Errorf("link %q -> %q: switch %q: %w", parent, child, child, ErrUnknownSwitch))
		}
		if _, ok := b.switches[parent]; !ok {
			b.fail(fmt.Errorf("link %q -> %q: switch %q: %w", parent, child, parent, ErrUnknownSwitch))
		}
		hasChild[parent] = true
	}
	mixed := make(map[string]bool)
	fine := "" // the last leaf found declared and without child switches
	for i := range b.nodes {
		n := &b.nodes[i]
		sw := n.Leaf
		if sw == "" || sw == fine { // a leaf's nodes mostly come in a row
			continue
		}
		_, known := b.switches[sw]
		if !known {
			b.fail(fmt.Errorf("node %q: switch %q: %w", n.Name, sw, ErrUnknownSwitch))
		}
		if hasChild[sw] && !mixed[sw] {
			mixed[sw] = true
			b.fail(fmt.Errorf("switch %q (node %q): %w", sw, n.Name, ErrMixedSwitch))
		}
		if known && !hasChild[sw] {
			fine = sw
		}
	}
}

// checkCycles walks up from every switch; a walk that returns to a switch
// on its own path is a cycle.
func (b *Builder) checkCycles() {
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[string]int, len(b.switches))
	for _, start := range sortedKeys(b.switches) {
		var path []string
		id := start
		for id != "" && state[id] == unseen {
			state[id] = onPath
			path = append(path, id)
			id = b.parent[id]
		}
		if id != "" && state[id] == onPath {
			b.fail(fmt.Errorf("switches %v -> %q: %w", path, id, ErrCycle))
		}
		for _, p := range path {
			state[p] = done
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.Sort(keys)
	return keys
}
