package placement

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// group is a domain (kind 'd'), a switch subtree ('s') or the cluster
// ('c'). cap is what the request can use of it; free is all it has free
// (or reclaimable, for classes above free), GPUs on nodes too full for
// the request's pods included: what it has left for others once the job
// is in is free minus the job.
type group struct {
	kind byte
	idx  int
	cap  int
	free int
	// slack is, for a one-pod request, the fewest GPUs a node of the
	// group that fits the pod keeps free once it is in (0: one fits it
	// exactly); 0 for other requests.
	slack int
}

// candidates appends the best candidates of one class.
func (p *planner) candidates(class int, out *[]Candidate) {
	p.capacities(class)
	c := p.c
	swCap, swFree, swSlack := make([]int, len(c.switches)), make([]int, len(c.switches)), make([]int, len(c.switches))
	onePod := p.req.Nodes == 1
	if onePod {
		for i := range swSlack {
			swSlack[i] = math.MaxInt
		}
	}
	total, totalFree := 0, 0
	for i, v := range p.nodeCap {
		total += v
		totalFree += p.nodeAvail[i]
		if l := c.nodes[i].leaf; l >= 0 {
			swCap[l] += v
			swFree[l] += p.nodeAvail[i]
			if onePod && v >= p.need {
				swSlack[l] = min(swSlack[l], p.nodeAvail[i]-p.need)
			}
		}
	}
	if total < p.need {
		return
	}
	for i := range c.switches {
		if par := c.switches[i].parent; par >= 0 {
			swCap[par] += swCap[i]
			swFree[par] += swFree[i]
			swSlack[par] = min(swSlack[par], swSlack[i])
		}
	}
	p.swCap, p.total = swCap, total
	var groups []group
	pick := func(gs []group) {
		// The tightest first: for one pod, the group whose best node
		// it fills most closely (a partly used node that fits it
		// exactly beats breaking a whole free one), then least left
		// free once the job is in, then least usable.
		slices.SortStableFunc(gs, func(a, b group) int {
			return cmp.Or(cmp.Compare(a.slack, b.slack), cmp.Compare(a.free, b.free), cmp.Compare(a.cap, b.cap))
		})
		groups = append(groups, gs[:min(len(gs), p.cfg.MaxCandidates)]...)
	}
	scoped := p.req.Within != ScopeNone
	if p.req.Within == ScopeDomain || !scoped {
		var gs []group
		for d, nodes := range c.domains {
			g := group{kind: 'd', idx: d}
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
		pick(gs)
	}
	hmin := -1
	if !scoped || !p.req.Required || p.req.Within == ScopeLeaf {
		byLevel := map[int][]group{}
		maxLevel := -1
		for i := range c.switches {
			if swCap[i] >= p.need {
				l := c.switches[i].level
				byLevel[l] = append(byLevel[l], group{'s', i, swCap[i], swFree[i], swSlack[i]})
				maxLevel = max(maxLevel, l)
			}
		}
		found := 0
		for l := 0; l <= maxLevel && found < p.cfg.MaxCandidates; l++ {
			if p.req.Within == ScopeLeaf && p.req.Required && l > 0 {
				break
			}
			if len(byLevel[l]) > 0 {
				if hmin < 0 {
					hmin = l
				}
				found += min(len(byLevel[l]), p.cfg.MaxCandidates)
				pick(byLevel[l])
			}
		}
		if maxLevel < 0 && (p.req.Within != ScopeLeaf || !p.req.Required) {
			groups = append(groups, group{'c', -1, total, totalFree, 0})
			hmin = c.depth
		}
	}
	if hmin < 0 {
		hmin = 0
	}
	for _, g := range groups {
		p.consider(class, g, p.fill(g, swCap), hmin, out)
		if g.kind == 's' && c.switches[g.idx].level >= 2 {
			// The descent takes the fullest child switch whole, which can
			// cost more leaves than taking the fullest leaves below it:
			// both are candidates and the rank key's leaf count decides.
			p.consider(class, g, p.fillLeaves(g.idx, swCap), hmin, out)
		}
	}
}

// consider explains a filled candidate of group g and appends it to out
// unless it repeats a node set, is no better than a candidate of a lower
// class, or loses more than the request is worth.
func (p *planner) consider(class int, g group, takes []int, hmin int, out *[]Candidate) {
	if takes == nil {
		return
	}
	key := nodeSetKey(takes)
	if p.seen[key] {
		return
	}
	cand := p.explain(class, g, takes, hmin)
	if class > 0 && len(cand.Victims) == 0 {
		return // the same as a free candidate
	}
	if class > 0 && p.cfg.MaxLossRatio > 0 && cand.Scores.Preemption > p.cfg.MaxLossRatio*p.jobSeconds() {
		return // it would destroy more than the request will run
	}
	if class == 2 && cand.Scores.WaitSeconds == 0 {
		return // the same as a reclaim-now candidate
	}
	p.seen[key] = true
	*out = append(*out, cand)
}

// explain picks victims and scores a filled candidate.
func (p *planner) explain(class int, g group, takes []int, hmin int) Candidate {
	c := p.c
	cand := Candidate{Class: classNames[class], Victims: []Victim{}}
	var set []int
	extra := map[int]int{}
	chosen := map[int]bool{}
	leaves, doms, leafTaken := map[int]bool{}, map[int]bool{}, map[int]int{}
	broken, loose := 0, false
	limit := c.now.UnixNano()
	if class == 2 {
		limit += int64(p.cfg.Horizon)
	}
	var wait time.Duration
	for ni, t := range takes {
		if t == 0 {
			continue
		}
		n := &c.nodes[ni]
		set = append(set, ni)
		cand.Nodes = append(cand.Nodes, NodeTake{Node: n.name, GPUs: t})
		leaves[n.leaf] = true
		leafTaken[n.leaf] += min(t, n.gpus-n.used)
		loose = loose || n.domain < 0
		if n.domain >= 0 {
			if !doms[n.domain] && p.freeDoms[n.domain] {
				broken++
			}
			doms[n.domain] = true
		}
		short := t - (n.gpus - n.used) - extra[ni]
		if short <= 0 {
			continue
		}
		for _, h := range p.victimOrder(n.hold, limit) {
			if short <= 0 {
				break
			}
			if chosen[h.rec] {
				continue
			}
			chosen[h.rec] = true
			r := &c.records[h.rec]
			for _, on := range c.recNodes[h.rec] {
				extra[on.rec] += on.gpus
			}
			short -= h.gpus
			lost := p.lost(r)
			v := Victim{Workload: r.Workload, Account: r.Account, GPUs: r.GPUs, Allocated: r.Allocated,
				Resumable: r.Resumable, ProtectedUntil: r.ProtectedUntil(p.cfg.MinRuntimeCap), Reason: p.reason(h.rec),
				LostGPUSeconds: float64(r.GPUs) * lost.Seconds()}
			cand.Victims = append(cand.Victims, v)
			cand.Scores.Preemption += v.LostGPUSeconds
			wait = max(wait, time.Unix(0, p.avail[h.rec]).Sub(c.now))
		}
	}
	sc := &cand.Scores
	sc.WaitSeconds = wait.Seconds()
	sc.Leaves, sc.Domains = len(leaves), len(doms)
	lca := c.lca(set)
	sc.LCALevel, sc.Residual = c.depth, 0
	if lca >= 0 {
		sc.LCALevel, sc.LCASwitch = c.switches[lca].level, c.switches[lca].id
	}
	cand.Group = c.groupName(g)
	// Fragmentation is the group's own: what this domain, switch or
	// cluster has left for others once the job is in (a domain with 8
	// free beats one with 32 free under the same leaf).
	sc.Residual = g.free - p.need
	if p.req.Nodes == 1 && len(set) == 1 {
		// What the node keeps free: its free GPUs and those its
		// victims free, less the pod.
		n := &c.nodes[set[0]]
		sc.NodeSlack = max(0, n.gpus-n.used+extra[set[0]]-p.need)
	}
	sc.SFrag = 1 - float64(max(0, sc.Residual))/float64(max(1, p.groupTotal(g)))
	for _, f := range p.freeDoms {
		if f {
			sc.FreeBefore++
		}
	}
	sc.FreeAfter = sc.FreeBefore - broken
	// Whole free switches, at every level, are kept like whole free
	// domains: a fat tree without domains has its free leaves to protect.
	brokenSw := map[int]bool{}
	for _, ni := range set {
		for s := c.nodes[ni].leaf; s >= 0 && p.freeSw[s]; s = c.switches[s].parent {
			brokenSw[s] = true
		}
	}
	for _, f := range p.freeSw {
		if f {
			sc.FreeSwBefore++
		}
	}
	sc.FreeSwAfter = sc.FreeSwBefore - len(brokenSw)
	sc.SKeep = 1
	if before := sc.FreeBefore + sc.FreeSwBefore; before > 0 {
		sc.SKeep = float64(sc.FreeAfter+sc.FreeSwAfter) / float64(before)
	}
	for l, free := range p.leafFree {
		sc.LargestFreeLeaf = max(sc.LargestFreeLeaf, free-leafTaken[l])
	}
	p.finish(&cand, hmin, loose)
	return cand
}
