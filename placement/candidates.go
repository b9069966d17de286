package placement

import (
	"cmp"
	"math"
	"slices"
)

// groupKind is what a candidate group is.
type groupKind uint8

// The kinds of candidate group.
const (
	// domainGroup is an NVLink domain.
	domainGroup groupKind = iota + 1
	// switchGroup is the subtree under one switch.
	switchGroup
	// clusterGroup is the whole cluster.
	clusterGroup
)

// String names the kind as candidate groups are named.
func (k groupKind) String() string {
	switch k {
	case domainGroup:
		return "domain"
	case switchGroup:
		return "switch"
	case clusterGroup:
		return "cluster"
	}
	return "unknown"
}

// group is a domain, a switch subtree or the cluster. cap is what the
// request can use of it; free is all it has free (or reclaimable, for
// classes above free), GPUs on nodes too full for the request's pods
// included: what it has left for others once the job is in is free minus
// the job.
type group struct {
	kind groupKind
	idx  int
	cap  int
	free int
	// slack is, for a one-pod request, the fewest GPUs a node of the
	// group that fits the pod keeps free once it is in (0: one fits it
	// exactly); 0 for other requests.
	slack int
}

// tally is what the request can use of every switch subtree and of the
// cluster for one class.
type tally struct {
	// swCap, swFree and swSlack are per switch, with the meaning of a
	// group's cap, free and slack.
	swCap, swFree, swSlack []int
	// total and totalFree are the cluster's cap and free.
	total, totalFree int
}

// candidates appends the best candidates of one class to out and
// returns it.
func (p *planner) candidates(out []Candidate, class int) []Candidate {
	p.capacities(class)
	onePod := p.req.Nodes == 1
	t := p.subtrees(onePod)
	if t.total < p.need {
		return out
	}
	p.swCap, p.total = t.swCap, t.total
	var groups []group
	scoped := p.req.Within != ScopeNone
	if p.req.Within == ScopeDomain || !scoped {
		groups = append(groups, p.tightest(p.domainGroups(onePod))...)
	}
	hmin := -1
	if !scoped || !p.req.Required || p.req.Within == ScopeLeaf {
		groups, hmin = p.switchGroups(groups, t)
	}
	return p.fillGroups(out, class, groups, t.swCap, max(hmin, 0))
}

// subtrees sums the node capacities of the class up the switch tree.
func (p *planner) subtrees(onePod bool) tally {
	c := p.c
	n := len(c.switches)
	t := tally{swCap: make([]int, n), swFree: make([]int, n), swSlack: make([]int, n)}
	if onePod {
		for i := range t.swSlack {
			t.swSlack[i] = math.MaxInt
		}
	}
	for i, v := range p.nodeCap {
		t.total += v
		t.totalFree += p.nodeAvail[i]
		if l := c.nodes[i].leaf; l >= 0 {
			t.swCap[l] += v
			t.swFree[l] += p.nodeAvail[i]
			if onePod && v >= p.need {
				t.swSlack[l] = min(t.swSlack[l], p.nodeAvail[i]-p.need)
			}
		}
	}
	if t.total < p.need {
		return t
	}
	for i := range c.switches {
		if par := c.switches[i].parent; par >= 0 {
			t.swCap[par] += t.swCap[i]
			t.swFree[par] += t.swFree[i]
			t.swSlack[par] = min(t.swSlack[par], t.swSlack[i])
		}
	}
	return t
}

// tightest sorts gs tightest first and returns at most MaxCandidates of
// them: for one pod, the group whose best node it fills most closely (a
// partly used node that fits it exactly beats breaking a whole free
// one), then least left free once the job is in, then least usable.
func (p *planner) tightest(gs []group) []group {
	slices.SortStableFunc(gs, func(a, b group) int {
		return cmp.Or(cmp.Compare(a.slack, b.slack), cmp.Compare(a.free, b.free), cmp.Compare(a.cap, b.cap))
	})
	return gs[:min(len(gs), p.cfg.MaxCandidates)]
}

// domainGroups returns the domains that can hold the request.
func (p *planner) domainGroups(onePod bool) []group {
	var gs []group
	for d, nodes := range p.c.domains {
		g := group{kind: domainGroup, idx: d}
		if onePod {
			g.slack = math.MaxInt
		}
		for _, ni := range nodes {
			g.cap += p.nodeCap[ni]
			g.free += p.nodeAvail[ni]
			if onePod && p.nodeCap[ni] >= p.need {
				g.slack = min(g.slack, p.nodeAvail[ni]-p.need)
			}
		}
		if g.cap >= p.need {
			gs = append(gs, g)
		}
	}
	return gs
}

// switchGroups appends to groups the tightest switch subtrees that can
// hold the request, level by level from the leaves up until
// MaxCandidates are found (leaves only for a required leaf scope), or
// the cluster when no switch can; it returns them and hmin, the lowest
// level that had one (the cluster's depth for the cluster, -1 for none).
func (p *planner) switchGroups(groups []group, t tally) ([]group, int) {
	c := p.c
	byLevel := map[int][]group{}
	maxLevel := -1
	for i := range c.switches {
		if t.swCap[i] >= p.need {
			l := c.switches[i].level
			byLevel[l] = append(byLevel[l], group{kind: switchGroup, idx: i, cap: t.swCap[i], free: t.swFree[i], slack: t.swSlack[i]})
			maxLevel = max(maxLevel, l)
		}
	}
	leafOnly := p.req.Within == ScopeLeaf && p.req.Required
	hmin, found := -1, 0
	for l := 0; l <= maxLevel && found < p.cfg.MaxCandidates; l++ {
		if leafOnly && l > 0 {
			break
		}
		if len(byLevel[l]) > 0 {
			if hmin < 0 {
				hmin = l
			}
			found += min(len(byLevel[l]), p.cfg.MaxCandidates)
			groups = append(groups, p.tightest(byLevel[l])...)
		}
	}
	if maxLevel < 0 && !leafOnly {
		groups = append(groups, group{kind: clusterGroup, idx: -1, cap: t.total, free: t.totalFree})
		hmin = c.depth
	}
	return groups, hmin
}

// fillGroups fills each group and appends the candidates worth
// considering to out.
func (p *planner) fillGroups(out []Candidate, class int, groups []group, swCap []int, hmin int) []Candidate {
	add := func(g group, takes []int) {
		if cand, ok := p.consider(class, g, takes, hmin); ok {
			out = append(out, cand)
		}
	}
	for _, g := range groups {
		add(g, p.fill(g, swCap))
		if g.kind == switchGroup && p.c.switches[g.idx].level >= 2 {
			// The descent takes the fullest child switch whole, which can
			// cost more leaves than taking the fullest leaves below it:
			// both are candidates and the rank key's leaf count decides.
			add(g, p.fillLeaves(g.idx, swCap))
		}
	}
	return out
}
