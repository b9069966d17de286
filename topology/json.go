package topology

import "encoding/json"

// graphJSON is the wire form of a Graph.
type graphJSON struct {
	Nodes    []Node   `json:"nodes"`
	Switches []Switch `json:"switches"`
	Domains  []Domain `json:"domains"`
}

// MarshalJSON encodes the graph as {"nodes","switches","domains"}, each in
// the graph's deterministic order.
func (g *Graph) MarshalJSON() ([]byte, error) {
	return json.Marshal(graphJSON{Nodes: g.nodes, Switches: g.switches, Domains: g.domains})
}

// UnmarshalJSON decodes what MarshalJSON wrote and rebuilds (and so
// re-validates) the graph.
func (g *Graph) UnmarshalJSON(data []byte) error {
	var w graphJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	b := NewBuilder()
	for _, n := range w.Nodes {
		b.AddNode(n)
		if n.Domain != "" {
			b.AddToDomain(n.Name, n.Domain, n.SubDomain)
		}
	}
	for _, s := range w.Switches {
		b.AddSwitch(SwitchInfo{ID: s.ID, DisplayName: s.DisplayName, LinkSpeedGbps: s.LinkSpeedGbps})
		for _, c := range s.Children {
			b.Link(s.ID, c)
		}
		for _, n := range s.Nodes {
			b.AttachNode(s.ID, n)
		}
	}
	built, err := b.Build()
	if err != nil {
		return err
	}
	*g = *built
	return nil
}
