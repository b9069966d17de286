package topology

// Aggregate counts what lies under one switch (or under the whole graph).
type Aggregate struct {
	// Nodes is the number of nodes anywhere below.
	Nodes int `json:"nodes"`
	// GPUs is the sum of their GPUs.
	GPUs int `json:"gpus"`
	// Domains is the number of accelerator domains with at least one
	// node below.
	Domains int `json:"domains"`
	// Switches is the number of switches below (not counting itself).
	Switches int `json:"switches"`
}

// Summary holds an Aggregate for every switch of a graph and for the
// graph as a whole, so that views of a large cluster can show a switch
// tree level by level without walking the nodes again. It is computed in
// one pass over the nodes and one over the switches.
type Summary struct {
	g *Graph
	// per switch, indexed like Graph.Switches
	agg []Aggregate
	// Total aggregates the whole graph.
	Total Aggregate
	// Unswitched aggregates the nodes under no switch.
	Unswitched Aggregate
}

// Summarize computes g's Summary.
func Summarize(g *Graph) *Summary {
	s := &Summary{g: g, agg: make([]Aggregate, len(g.switches))}
	// A domain is counted once per switch: each switch keeps the set of
	// domains below it until it has been folded into its parent.
	domSeen := make([]map[int]struct{}, len(g.switches))
	unswitchedDoms := map[int]struct{}{}
	for i := range g.nodes {
		n := &g.nodes[i]
		d := -1
		if n.Domain != "" {
			d = g.domIndex[n.Domain]
		}
		if n.Leaf == "" {
			s.Unswitched.Nodes++
			s.Unswitched.GPUs += n.GPUs
			if d >= 0 {
				unswitchedDoms[d] = struct{}{}
			}
			continue
		}
		li := g.swIndex[n.Leaf]
		s.agg[li].Nodes++
		s.agg[li].GPUs += n.GPUs
		if d >= 0 {
			if domSeen[li] == nil {
				domSeen[li] = map[int]struct{}{}
			}
			domSeen[li][d] = struct{}{}
		}
	}
	s.Unswitched.Domains = len(unswitchedDoms)
	// Switches are listed leaves first (ascending level): every child is
	// folded into its parent before the parent is folded into its own.
	for i := range g.switches {
		sw := &g.switches[i]
		s.agg[i].Domains = len(domSeen[i])
		if sw.Parent == "" {
			continue
		}
		p := g.swIndex[sw.Parent]
		s.agg[p].Nodes += s.agg[i].Nodes
		s.agg[p].GPUs += s.agg[i].GPUs
		s.agg[p].Switches += s.agg[i].Switches + 1
		if len(domSeen[i]) > 0 {
			if domSeen[p] == nil {
				domSeen[p] = make(map[int]struct{}, len(domSeen[i]))
			}
			for d := range domSeen[i] {
				domSeen[p][d] = struct{}{}
			}
		}
		domSeen[i] = nil
	}
	for i := range g.nodes {
		s.Total.GPUs += g.nodes[i].GPUs
	}
	s.Total.Nodes = len(g.nodes)
	s.Total.Domains = len(g.domains)
	s.Total.Switches = len(g.switches)
	return s
}

// Graph returns the summarized graph.
func (s *Summary) Graph() *Graph { return s.g }

// Switch returns the aggregate under the switch with the given ID.
func (s *Summary) Switch(id string) (Aggregate, bool) {
	i, ok := s.g.swIndex[id]
	if !ok {
		return Aggregate{}, false
	}
	return s.agg[i], true
}
