package topology

import (
	"fmt"
	"slices"
)

// TryAddPath is AddPath for a fact one source may get wrong (a node's
// own report): it places a declared node under path only if that keeps
// the graph buildable, and otherwise changes nothing and returns why,
// wrapping the sentinel that Build would have failed with. It refuses a
// node already placed, an empty or repeated switch ID, a switch declared
// with other data, a new switch whose safe name is another switch's or a
// declared node's (ErrNameCollision), a switch given a second parent, a
// switch that would have both nodes and child switches, and a cycle.
// Call it after every node is declared (AddNode), so that a switch named
// like a node is caught whatever the order.
func (b *Builder) TryAddPath(node string, path []SwitchInfo) error {
	if len(path) == 0 {
		return nil
	}
	n, ok := b.node(node)
	switch {
	case !ok:
		return fmt.Errorf("node %q: %w", node, ErrUnknownNode)
	case n.Leaf != "":
		return fmt.Errorf("node %q under %q and %q: %w", node, n.Leaf, path[0].ID, ErrTwoLeaves)
	}
	b.indexNames()
	var buf [8]string // paths are short: no allocation for the names
	names := buf[:0]
	for i := range path {
		name, err := b.checkPathSwitch(path, i, names)
		if err != nil {
			return fmt.Errorf("node %q: %w", node, err)
		}
		names = append(names, name)
	}
	if err := b.checkPathCycle(path); err != nil {
		return fmt.Errorf("node %q: %w", node, err)
	}
	b.AddPath(node, path)
	return nil
}

// checkPathSwitch checks path[i] as TryAddPath places it and returns its
// safe name when it is a new switch ("" for a known one); newNames are
// those of the switches before it.
func (b *Builder) checkPathSwitch(path []SwitchInfo, i int, newNames []string) (string, error) {
	s := path[i]
	if s.ID == "" {
		return "", fmt.Errorf("switch: %w", ErrEmptyName)
	}
	if slices.ContainsFunc(path[:i], func(o SwitchInfo) bool { return o.ID == s.ID }) {
		return "", fmt.Errorf("switch %q twice in one path: %w", s.ID, ErrCycle)
	}
	name := ""
	if old, known := b.switches[s.ID]; known {
		if old != s {
			return "", fmt.Errorf("switch %q declared twice with different data: %w", s.ID, ErrDuplicateSwitch)
		}
	} else {
		name = SafeName(s.ID)
		if other, taken := b.swNames[name]; taken {
			return "", fmt.Errorf("switches %q and %q both map to name %q: %w", other, s.ID, name, ErrNameCollision)
		}
		if j := slices.Index(newNames, name); j >= 0 {
			return "", fmt.Errorf("switches %q and %q both map to name %q: %w", path[j].ID, s.ID, name, ErrNameCollision)
		}
		if _, isNode := b.indexed()[name]; isNode {
			return "", fmt.Errorf("switch %q would be named %q, like node %q: %w", s.ID, name, name, ErrNameCollision)
		}
	}
	if i == 0 && b.hasChild[s.ID] {
		return "", fmt.Errorf("switch %q has child switches and would have node %w", s.ID, ErrMixedSwitch)
	}
	if i > 0 && b.hasNodes[s.ID] {
		return "", fmt.Errorf("switch %q has nodes and would have child switch %q: %w", s.ID, path[i-1].ID, ErrMixedSwitch)
	}
	if i+1 < len(path) {
		if old, ok := b.parent[s.ID]; ok && old != path[i+1].ID {
			return "", fmt.Errorf("switch %q under %q and %q: %w", s.ID, old, path[i+1].ID, ErrTwoParents)
		}
	}
	return name, nil
}

// checkPathCycle reports a cycle that path's links would close: a
// switch above the path's top (by the links made so far) that is on the
// path.
func (b *Builder) checkPathCycle(path []SwitchInfo) error {
	top := path[len(path)-1].ID
	for id, steps := b.parent[top], 0; id != "" && steps <= len(b.parent); id, steps = b.parent[id], steps+1 {
		if slices.ContainsFunc(path, func(s SwitchInfo) bool { return s.ID == id }) {
			return fmt.Errorf("switch %q is above %q and below it: %w", id, top, ErrCycle)
		}
	}
	return nil
}

// TryAddToDomain is AddToDomain for a fact one source may get wrong: it
// puts a declared node in domain (and subDomain) only if that keeps the
// graph buildable, and otherwise changes nothing and returns why. It
// refuses an empty domain, a node already in another domain, a new
// domain whose safe name is another domain's (ErrNameCollision), and a
// sub-domain that is already in another domain (ErrSubDomain).
func (b *Builder) TryAddToDomain(node, domain, subDomain string) error {
	n, ok := b.node(node)
	switch {
	case domain == "":
		return fmt.Errorf("node %q: domain: %w", node, ErrEmptyName)
	case !ok:
		return fmt.Errorf("domain %q: node %q: %w", domain, node, ErrUnknownNode)
	case n.Domain != "" && (n.Domain != domain || n.SubDomain != subDomain):
		return fmt.Errorf("node %q in %s and %s: %w", node, domainLabel(n.Domain, n.SubDomain), domainLabel(domain, subDomain), ErrTwoDomains)
	}
	b.indexNames()
	if name := SafeName(domain); b.domNames[name] != "" && b.domNames[name] != domain {
		return fmt.Errorf("domains %q and %q both map to name %q: %w", b.domNames[name], domain, name, ErrNameCollision)
	}
	if d, ok := b.subOf[subDomain]; subDomain != "" && ok && d != domain {
		return fmt.Errorf("sub-domain %q is in domains %q and %q: %w", subDomain, d, domain, ErrSubDomain)
	}
	b.AddToDomain(node, domain, subDomain)
	return nil
}

// indexNames makes the indexes the Try methods check against, from what
// was added so far; Link, AttachNode and AddToDomain keep them up to date
// from then on.
func (b *Builder) indexNames() {
	if b.swNames != nil {
		return
	}
	b.swNames = make(map[string]string, len(b.switches))
	for id := range b.switches {
		b.swNames[SafeName(id)] = id
	}
	b.hasChild, b.hasNodes = map[string]bool{}, map[string]bool{}
	for _, parent := range b.parent {
		b.hasChild[parent] = true
	}
	b.domNames, b.subOf = map[string]string{}, map[string]string{}
	for i := range b.nodes {
		b.noteNode(&b.nodes[i])
	}
}

// noteNode records n's placements in the indexes.
func (b *Builder) noteNode(n *Node) {
	if n.Leaf != "" {
		b.hasNodes[n.Leaf] = true
	}
	if n.Domain != "" {
		b.domNames[SafeName(n.Domain)] = n.Domain
		if n.SubDomain != "" {
			b.subOf[n.SubDomain] = n.Domain
		}
	}
}
