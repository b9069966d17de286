package topology

import "fmt"

// PathInfo returns node's switch path as Builder input, closest first
// (nil for a node under no switch): what AddPath takes to rebuild it.
func (g *Graph) PathInfo(node string) []SwitchInfo {
	sw := g.Path(node)
	if len(sw) == 0 {
		return nil
	}
	out := make([]SwitchInfo, len(sw))
	for i, s := range sw {
		out[i] = SwitchInfo{ID: s.ID, DisplayName: s.DisplayName, LinkSpeedGbps: s.LinkSpeedGbps}
	}
	return out
}

// TrimTop returns a graph like g in which each node's switch path loses
// its n outermost (top) switches: each node on its own, so a node whose
// path is shorter loses fewer of its own, and one whose path has n
// switches or fewer is under no switch. Nodes, their facts and their
// accelerator domains are kept; g is not modified. n <= 0 returns g.
func (g *Graph) TrimTop(n int) (*Graph, error) {
	if n <= 0 {
		return g, nil
	}
	b := NewBuilder()
	b.Grow(len(g.nodes))
	for _, node := range g.nodes {
		m := node
		m.Leaf, m.Domain, m.SubDomain = "", "", ""
		b.AddNode(m)
		path := g.PathInfo(node.Name)
		if keep := len(path) - n; keep > 0 {
			b.AddPath(node.Name, path[:keep])
		}
		if node.Domain != "" {
			b.AddToDomain(node.Name, node.Domain, node.SubDomain)
		}
	}
	out, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("trim %d tiers: %w", n, err)
	}
	return out, nil
}
