// Package topology holds toposcope's one normalized model of a GPU cluster:
// compute nodes, a switch tree of any depth, accelerator (NVLink) domains
// with optional sub-domains, and the nodes a provider could not place.
//
// Providers build a Graph with a Builder; engines read it. A built Graph is
// immutable and every listing it returns is in a deterministic order. The
// package imports no cloud SDK and no Kubernetes package.
package topology

import "sync"

// Node is a compute node as the scheduler knows it.
type Node struct {
	// Name is the scheduler's node name (usually the host name).
	Name string `json:"name"`
	// InstanceID is the provider's ID for the machine, if it has one.
	InstanceID string `json:"instanceID,omitempty"`
	// Region and Zone locate the node in a cloud.
	Region string `json:"region,omitempty"`
	Zone   string `json:"zone,omitempty"`
	// GPUs is the number of accelerators on the node.
	GPUs int `json:"gpus"`
	// Attributes holds provider-specific facts (never credentials).
	Attributes map[string]string `json:"attributes,omitempty"`

	// Leaf is the ID of the switch the node hangs under; empty if none.
	// It is filled in by Build.
	Leaf string `json:"leaf,omitempty"`
	// Domain and SubDomain are the IDs of the node's accelerator domain
	// and sub-domain; empty if none. They are filled in by Build.
	Domain    string `json:"domain,omitempty"`
	SubDomain string `json:"subDomain,omitempty"`
}

// Switch is one switch of the fabric tree.
type Switch struct {
	// ID is the provider's own identifier for the switch.
	ID string `json:"id"`
	// Name is SafeName(ID): stable, at most 64 characters, and safe for
	// every consumer (Slurm, Kubernetes labels, hostlists).
	Name string `json:"name"`
	// DisplayName is an optional human name given by the provider.
	DisplayName string `json:"displayName,omitempty"`
	// Level is 0 for a switch with no child switches and
	// 1 + the highest child level otherwise, as Slurm computes it.
	Level int `json:"level"`
	// Parent is the ID of the parent switch; empty for a root.
	Parent string `json:"parent,omitempty"`
	// Children lists the IDs of child switches, in natural order of name.
	Children []string `json:"children,omitempty"`
	// Nodes lists the names of nodes directly under the switch, in
	// natural order.
	Nodes []string `json:"nodes,omitempty"`
	// LinkSpeedGbps is the speed of the switch's uplink in Gb/s; 0 when
	// unknown.
	LinkSpeedGbps uint32 `json:"linkSpeedGbps,omitempty"`
}

// Domain is an accelerator domain (an NVLink domain, a Slurm block).
type Domain struct {
	// ID is the provider's own identifier for the domain.
	ID string `json:"id"`
	// Name is SafeName(ID).
	Name string `json:"name"`
	// Nodes lists the member nodes in natural order.
	Nodes []string `json:"nodes"`
	// SubDomains lists optional finer groups (for example racks), in
	// natural order of name. Every sub-domain node is a domain node.
	SubDomains []SubDomain `json:"subDomains,omitempty"`
}

// SubDomain is a part of an accelerator domain, such as one rack.
type SubDomain struct {
	// ID is the provider's own identifier for the sub-domain.
	ID string `json:"id"`
	// Name is SafeName(ID).
	Name string `json:"name"`
	// Nodes lists the member nodes in natural order.
	Nodes []string `json:"nodes"`
}

// Graph is a built, validated and immutable cluster topology. The slices
// and pointers it returns are shared with the graph: callers must not
// modify them.
type Graph struct {
	nodes    []Node
	idx      *nodeIndex
	switches []Switch
	swIndex  map[string]int
	domains  []Domain
	domIndex map[string]int
	depth    int
}

// nodeIndex maps the names of a graph's nodes to their positions. It
// is made on first use: a graph that is only rendered (generate) never
// needs it. Graphs with the same nodes in the same order (WithAttributes)
// share it.
type nodeIndex struct {
	once sync.Once
	m    map[string]int
}

// nodeAt returns the position of the named node.
func (g *Graph) nodeAt(name string) (int, bool) {
	if g.idx == nil {
		return 0, false
	}
	g.idx.once.Do(func() {
		if g.idx.m == nil {
			g.idx.m = make(map[string]int, len(g.nodes))
			for i := range g.nodes {
				g.idx.m[g.nodes[i].Name] = i
			}
		}
	})
	i, ok := g.idx.m[name]
	return i, ok
}

// Nodes returns every node in natural order of name.
func (g *Graph) Nodes() []Node { return g.nodes }

// Node returns the named node.
func (g *Graph) Node(name string) (*Node, bool) {
	i, ok := g.nodeAt(name)
	if !ok {
		return nil, false
	}
	return &g.nodes[i], true
}

// Switches returns every switch, leaves first (ascending level), then in
// natural order of name within a level.
func (g *Graph) Switches() []Switch { return g.switches }

// Switch returns the switch with the given ID.
func (g *Graph) Switch(id string) (*Switch, bool) {
	i, ok := g.swIndex[id]
	if !ok {
		return nil, false
	}
	return &g.switches[i], true
}

// Roots returns the switches that have no parent, in natural order of name.
func (g *Graph) Roots() []*Switch {
	var out []*Switch
	for i := range g.switches {
		if g.switches[i].Parent == "" {
			out = append(out, &g.switches[i])
		}
	}
	sortSwitchPtrs(out)
	return out
}

// Path returns the switches above the named node, closest first; nil if
// the node is unknown or under no switch.
func (g *Graph) Path(node string) []*Switch {
	n, ok := g.Node(node)
	if !ok || n.Leaf == "" {
		return nil
	}
	var out []*Switch
	for id := n.Leaf; id != ""; {
		s := &g.switches[g.swIndex[id]]
		out = append(out, s)
		id = s.Parent
	}
	return out
}

// Depth returns the number of switch levels (0 for a graph with no switch).
func (g *Graph) Depth() int { return g.depth }

// Domains returns every accelerator domain in natural order of name.
func (g *Graph) Domains() []Domain { return g.domains }

// Domain returns the domain with the given ID.
func (g *Graph) Domain(id string) (*Domain, bool) {
	i, ok := g.domIndex[id]
	if !ok {
		return nil, false
	}
	return &g.domains[i], true
}

// NodesWithoutSwitch returns, in natural order, the nodes under no switch.
func (g *Graph) NodesWithoutSwitch() []string {
	return g.selectNodes(func(n *Node) bool { return n.Leaf == "" })
}

// NodesWithoutDomain returns, in natural order, the nodes in no domain.
func (g *Graph) NodesWithoutDomain() []string {
	return g.selectNodes(func(n *Node) bool { return n.Domain == "" })
}

// Unplaced returns, in natural order, the nodes the provider could not
// place at all: under no switch and in no accelerator domain.
func (g *Graph) Unplaced() []string {
	return g.selectNodes(func(n *Node) bool { return n.Leaf == "" && n.Domain == "" })
}

func (g *Graph) selectNodes(keep func(*Node) bool) []string {
	var out []string
	for i := range g.nodes {
		if keep(&g.nodes[i]) {
			out = append(out, g.nodes[i].Name)
		}
	}
	return out
}

// DomainsInFabricOrder returns the domains ordered by where their nodes sit
// in the switch tree (a depth-first walk from the roots, children in natural
// order), so that neighbouring domains share the closest switches. Domains
// none of whose nodes is under a switch follow, in natural order of name.
func (g *Graph) DomainsInFabricOrder() []*Domain {
	rank := make(map[string]int, len(g.domains))
	next := 0
	var walk func(id string)
	walk = func(id string) {
		s := &g.switches[g.swIndex[id]]
		for _, name := range s.Nodes {
			if i, _ := g.nodeAt(name); g.nodes[i].Domain != "" {
				d := g.nodes[i].Domain
				if _, seen := rank[d]; !seen {
					rank[d] = next
					next++
				}
			}
		}
		for _, c := range s.Children {
			walk(c)
		}
	}
	for _, r := range g.Roots() {
		walk(r.ID)
	}
	out := make([]*Domain, 0, len(g.domains))
	var rest []*Domain
	for i := range g.domains {
		if _, ok := rank[g.domains[i].ID]; ok {
			out = append(out, &g.domains[i])
		} else {
			rest = append(rest, &g.domains[i])
		}
	}
	sortByRank(out, rank)
	return append(out, rest...)
}
