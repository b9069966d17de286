package placement

import (
	"cmp"
	"slices"
)

// fill returns GPUs taken per node index (a full-length slice) or nil.
func (p *planner) fill(g group, swCap []int) []int {
	takes := make([]int, len(p.c.nodes))
	switch g.kind {
	case domainGroup:
		p.fillNodes(p.c.domains[g.idx], p.need, takes)
	case switchGroup:
		p.fillSwitch(g.idx, p.need, swCap, takes)
	default:
		var roots, loose []int
		for i := range p.c.switches {
			if p.c.switches[i].parent < 0 {
				roots = append(roots, i)
			}
		}
		for i := range p.c.nodes {
			if p.c.nodes[i].leaf < 0 {
				loose = append(loose, i)
			}
		}
		caps := make([]int, 0, len(roots)+1)
		for _, r := range roots {
			caps = append(caps, swCap[r])
		}
		lv := 0
		for _, ni := range loose {
			lv += p.nodeCap[ni]
		}
		caps = append(caps, lv)
		split := BestFit(caps, p.need)
		if split == nil {
			return nil
		}
		for k, r := range roots {
			p.fillSwitch(r, split[k], swCap, takes)
		}
		p.fillNodes(loose, split[len(roots)], takes)
	}
	return takes
}

// fillSwitch best-fits need over child switches and, under a leaf, over
// the leaf's accelerator domains, then nodes.
func (p *planner) fillSwitch(si, need int, swCap []int, takes []int) {
	if need <= 0 {
		return
	}
	s := &p.c.switches[si]
	if len(s.children) > 0 {
		caps := make([]int, len(s.children))
		for k, ch := range s.children {
			caps[k] = swCap[ch]
		}
		for k, v := range BestFit(caps, need) {
			p.fillSwitch(s.children[k], v, swCap, takes)
		}
		return
	}
	var order []int // domain indexes in first-seen order
	parts := map[int][]int{}
	for _, ni := range s.nodes {
		d := p.c.nodes[ni].domain
		if _, ok := parts[d]; !ok {
			order = append(order, d)
		}
		parts[d] = append(parts[d], ni)
	}
	caps := make([]int, len(order))
	for k, d := range order {
		for _, ni := range parts[d] {
			caps[k] += p.nodeCap[ni]
		}
	}
	for k, v := range BestFit(caps, need) {
		p.fillNodes(parts[order[k]], v, takes)
	}
}

func (p *planner) fillNodes(nodes []int, need int, takes []int) {
	if g := p.req.GPUsPerNode; p.req.Nodes > 0 {
		// Whole nodes × g GPUs: every node that holds g is the same to the
		// capped capacities, so take the nodes with the fewest GPUs for the
		// job first (best fit on the node's real free GPUs), in natural
		// order on ties.
		order := make([]int, 0, len(nodes))
		for _, ni := range nodes {
			if p.nodeCap[ni] >= g {
				order = append(order, ni)
			}
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p.nodeAvail[a], p.nodeAvail[b]) })
		for _, ni := range order {
			if need < g {
				break
			}
			takes[ni] += g
			need -= g
		}
		return
	}
	caps := make([]int, len(nodes))
	for k, ni := range nodes {
		caps[k] = p.nodeCap[ni]
	}
	for k, v := range BestFit(caps, need) {
		takes[nodes[k]] += v
	}
}

// fillLeaves takes need from the leaves below switch si, the fullest
// whole first (placement.BestFit over the leaves, in tree order), each
// leaf's share then filled as fillSwitch does; nil when they hold less.
func (p *planner) fillLeaves(si int, swCap []int) []int {
	var leaves []int
	var walk func(int)
	walk = func(i int) {
		if len(p.c.switches[i].children) == 0 {
			leaves = append(leaves, i)
		}
		for _, ch := range p.c.switches[i].children {
			walk(ch)
		}
	}
	walk(si)
	caps := make([]int, len(leaves))
	for k, l := range leaves {
		caps[k] = swCap[l]
	}
	split := BestFit(caps, p.need)
	if split == nil {
		return nil
	}
	takes := make([]int, len(p.c.nodes))
	for k, v := range split {
		p.fillSwitch(leaves[k], v, swCap, takes)
	}
	return takes
}
