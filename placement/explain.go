package placement

import "time"

// consider explains a filled candidate of group g and reports whether it
// is worth keeping: not when it repeats a node set, is no better than a
// candidate of a lower class, or loses more than the request is worth.
func (p *planner) consider(class int, g group, takes []int, hmin int) (Candidate, bool) {
	if takes == nil {
		return Candidate{}, false
	}
	key := nodeSetKey(takes)
	if p.seen[key] {
		return Candidate{}, false
	}
	cand := p.explain(class, g, takes, hmin)
	if class > 0 && len(cand.Victims) == 0 {
		return Candidate{}, false // the same as a free candidate
	}
	if class > 0 && p.cfg.MaxLossRatio > 0 && cand.Scores.Preemption > p.cfg.MaxLossRatio*p.jobSeconds() {
		return Candidate{}, false // it would destroy more than the request will run
	}
	if class == 2 && cand.Scores.WaitSeconds == 0 {
		return Candidate{}, false // the same as a reclaim-now candidate
	}
	p.seen[key] = true
	return cand, true
}

// footprint is where a filled candidate's nodes are.
type footprint struct {
	leaves    map[int]bool // their leaf switches
	doms      map[int]bool // their domains
	leafTaken map[int]int  // per leaf, the free GPUs taken
	broken    int          // whole free domains taken into
	loose     bool         // a node outside every domain is taken
}

// eviction is the victims picked so far for one candidate.
type eviction struct {
	limit  int64        // UnixNano by which a victim must be preemptible
	chosen map[int]bool // records picked
	extra  map[int]int  // per node, the GPUs the picked records free
	wait   time.Duration
}

// explain picks victims and scores a filled candidate.
func (p *planner) explain(class int, g group, takes []int, hmin int) Candidate {
	cand := Candidate{Class: classNames[class], Group: p.c.groupName(g), Victims: []Victim{}}
	fp := footprint{leaves: map[int]bool{}, doms: map[int]bool{}, leafTaken: map[int]int{}}
	ev := eviction{limit: p.c.now.UnixNano(), chosen: map[int]bool{}, extra: map[int]int{}}
	var set []int // the nodes taken
	if class == 2 {
		ev.limit += int64(p.cfg.Horizon)
	}
	for ni, t := range takes {
		if t == 0 {
			continue
		}
		n := &p.c.nodes[ni]
		cand.Nodes = append(cand.Nodes, NodeTake{Node: n.name, GPUs: t})
		set = append(set, ni)
		p.land(&fp, ni, t)
		if short := t - (n.gpus - p.c.used[ni]) - ev.extra[ni]; short > 0 {
			p.evict(&ev, &cand, p.c.holds(ni), short)
		}
	}
	cand.Scores.WaitSeconds = ev.wait.Seconds()
	p.scoreShape(&cand.Scores, g, set, &fp, ev.extra)
	p.scoreKept(&cand.Scores, set, &fp)
	p.finish(&cand, hmin, fp.loose)
	return cand
}

// land adds node ni, taking t GPUs, to fp's leaves and domains.
func (p *planner) land(fp *footprint, ni, t int) {
	n := &p.c.nodes[ni]
	fp.leaves[n.leaf] = true
	fp.leafTaken[n.leaf] += min(t, n.gpus-p.c.used[ni])
	fp.loose = fp.loose || n.domain < 0
	if n.domain >= 0 {
		if !fp.doms[n.domain] && p.freeDoms[n.domain] {
			fp.broken++
		}
		fp.doms[n.domain] = true
	}
}

// evict picks victims among the holdings of a node, in victimOrder and
// skipping those already picked, until they free short GPUs, and adds
// them to cand.
func (p *planner) evict(ev *eviction, cand *Candidate, hold []holding, short int) {
	for _, h := range p.victimOrder(hold, ev.limit) {
		if short <= 0 {
			break
		}
		if ev.chosen[h.rec] {
			continue
		}
		ev.chosen[h.rec] = true
		for _, on := range p.c.recNodes[h.rec] {
			ev.extra[on.rec] += on.gpus
		}
		short -= h.gpus
		v := p.victim(h.rec)
		cand.Victims = append(cand.Victims, v)
		cand.Scores.Preemption += v.LostGPUSeconds
		ev.wait = max(ev.wait, time.Unix(0, p.avail[h.rec]).Sub(p.c.now))
	}
}

// victim describes record ri preempted now.
func (p *planner) victim(ri int) Victim {
	r := &p.c.records[ri]
	return Victim{
		Workload:       r.Workload,
		Account:        r.Account,
		GPUs:           r.GPUs,
		Allocated:      r.Allocated,
		Resumable:      r.Resumable,
		ProtectedUntil: r.ProtectedUntil(p.cfg.MinRuntimeCap),
		Reason:         p.reason(ri),
		LostGPUSeconds: float64(r.GPUs) * p.lost(r).Seconds(),
	}
}

// scoreShape scores how compact the candidate on nodes set is and how
// much of its group it leaves to others; extra is what its victims free
// per node.
func (p *planner) scoreShape(sc *Scores, g group, set []int, fp *footprint, extra map[int]int) {
	c := p.c
	sc.Leaves, sc.Domains = len(fp.leaves), len(fp.doms)
	sc.LCALevel = c.depth
	if lca := c.lca(set); lca >= 0 {
		sc.LCALevel, sc.LCASwitch = c.switches[lca].level, c.switches[lca].id
	}
	// Fragmentation is the group's own: what this domain, switch or
	// cluster has left for others once the job is in (a domain with 8
	// free beats one with 32 free under the same leaf).
	sc.Residual = g.free - p.need
	if p.req.Nodes == 1 && len(set) == 1 {
		// What the node keeps free: its free GPUs and those its
		// victims free, less the pod.
		n := &c.nodes[set[0]]
		sc.NodeSlack = max(0, n.gpus-c.used[set[0]]+extra[set[0]]-p.need)
	}
	sc.SFrag = 1 - float64(max(0, sc.Residual))/float64(max(1, p.groupTotal(g)))
}

// scoreKept scores what the candidate on nodes set keeps whole: the
// free domains and switches before and after it, and the largest free
// leaf it leaves.
func (p *planner) scoreKept(sc *Scores, set []int, fp *footprint) {
	c := p.c
	for _, f := range p.freeDoms {
		if f {
			sc.FreeBefore++
		}
	}
	sc.FreeAfter = sc.FreeBefore - fp.broken
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
		sc.LargestFreeLeaf = max(sc.LargestFreeLeaf, free-fp.leafTaken[l])
	}
}
