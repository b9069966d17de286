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
	nodes     map[string]*Node
	order     []*Node // nodes in the order added, so sorted input sorts in O(n)
	switches  map[string]*SwitchInfo
	parent    map[string]string    // child switch ID -> parent switch ID
	leafOf    map[string]string    // node name -> switch ID
	domains   map[string]string    // domain ID -> "" (declared)
	subOf     map[string][2]string // node -> {domain, sub-domain}
	problems  []error
	extraErrs int
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{
		nodes:    make(map[string]*Node),
		switches: make(map[string]*SwitchInfo),
		parent:   make(map[string]string),
		leafOf:   make(map[string]string),
		domains:  make(map[string]string),
		subOf:    make(map[string][2]string),
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
func (b *Builder) AddNode(n Node) {
	if err := CheckNodeName(n.Name); err != nil {
		b.fail(fmt.Errorf("node %q: %w", n.Name, err))
		return
	}
	n.Leaf, n.Domain, n.SubDomain = "", "", ""
	if old, ok := b.nodes[n.Name]; ok {
		if !sameNode(old, &n) {
			b.fail(fmt.Errorf("node %q: %w", n.Name, ErrDuplicateNode))
		}
		return
	}
	n.Attributes = maps.Clone(n.Attributes)
	b.nodes[n.Name] = &n
	b.order = append(b.order, &n)
}

func sameNode(a, b *Node) bool {
	return a.InstanceID == b.InstanceID && a.Region == b.Region && a.Zone == b.Zone &&
		a.GPUs == b.GPUs && maps.Equal(a.Attributes, b.Attributes)
}

// AddSwitch declares a switch. Declaring it again with identical data is
// allowed; a different display name or link speed is an error.
func (b *Builder) AddSwitch(s SwitchInfo) {
	if s.ID == "" {
		b.fail(fmt.Errorf("switch: %w", ErrEmptyName))
		return
	}
	if old, ok := b.switches[s.ID]; ok {
		if *old != s {
			b.fail(fmt.Errorf("switch %q declared twice with different data: %w", s.ID, ErrDuplicateSwitch))
		}
		return
	}
	b.switches[s.ID] = &s
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
}

// AttachNode puts a declared node directly under a switch.
func (b *Builder) AttachNode(switchID, node string) {
	if old, ok := b.leafOf[node]; ok {
		if old != switchID {
			b.fail(fmt.Errorf("node %q under %q and %q: %w", node, old, switchID, ErrTwoLeaves))
		}
		return
	}
	b.leafOf[node] = switchID
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
	want := [2]string{domain, subDomain}
	if old, ok := b.subOf[node]; ok {
		if old != want {
			b.fail(fmt.Errorf("node %q in %v and %v: %w", node, old, want, ErrTwoDomains))
		}
		return
	}
	b.subOf[node] = want
	b.domains[domain] = ""
}

// Build validates what was added and returns the Graph, or an error that
// joins every problem found (each wrapping one of the package's sentinel
// errors).
func (b *Builder) Build() (*Graph, error) {
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
	for _, n := range b.order {
		sw, ok := b.leafOf[n.Name]
		if !ok {
			continue
		}
		if _, ok := b.switches[sw]; !ok {
			b.fail(fmt.Errorf("node %q: switch %q: %w", n.Name, sw, ErrUnknownSwitch))
		}
		if hasChild[sw] && !mixed[sw] {
			mixed[sw] = true
			b.fail(fmt.Errorf("switch %q (node %q): %w", sw, n.Name, ErrMixedSwitch))
		}
	}
	for _, node := range unknownNodes(b.nodes, b.leafOf) {
		b.fail(fmt.Errorf("switch %q: node %q: %w", b.leafOf[node], node, ErrUnknownNode))
	}
	for _, node := range unknownNodes(b.nodes, b.subOf) {
		b.fail(fmt.Errorf("domain %q: node %q: %w", b.subOf[node][0], node, ErrUnknownNode))
	}
}

// unknownNodes returns, sorted, the keys of m that are not declared nodes.
func unknownNodes[V any](nodes map[string]*Node, m map[string]V) []string {
	var out []string
	for name := range m {
		if _, ok := nodes[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
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
