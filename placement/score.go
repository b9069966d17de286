package placement

import (
	"cmp"
	"math"
	"slices"
)

// victimOrder returns the eligible holdings available by limit in the
// order of fairshare.md §9.3: unallocated first, then the owner with the
// lowest standing key (most over-served), then lower priority, then the
// most recently started.
func (p *planner) victimOrder(hold []holding, limit int64) []holding {
	var out []holding
	for _, h := range hold {
		if p.eligibleBy(h.rec, limit) {
			out = append(out, h)
		}
	}
	key := func(ri int) float64 {
		k, _ := p.ownerKey(p.c.records[ri].Account)
		return k
	}
	slices.SortStableFunc(out, func(a, b holding) int {
		ra, rb := &p.c.records[a.rec], &p.c.records[b.rec]
		if ra.Allocated != rb.Allocated {
			if !ra.Allocated {
				return -1
			}
			return 1
		}
		if ra.Resumable != rb.Resumable { // work that resumes loses less
			if ra.Resumable {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(key(a.rec), key(b.rec)), cmp.Compare(ra.Priority, rb.Priority),
			rb.Start.Compare(ra.Start), cmp.Compare(ra.Workload, rb.Workload))
	})
	return out
}

// groupName names a candidate group.
func (c *Cluster) groupName(g group) string {
	switch g.kind {
	case domainGroup:
		return g.kind.String() + " " + c.domainID[g.idx]
	case switchGroup:
		return g.kind.String() + " " + c.switches[g.idx].id
	}
	return g.kind.String()
}

// groupTotal returns the GPUs of a candidate group: a domain's, a
// switch's, or the cluster's.
func (p *planner) groupTotal(g group) int {
	switch g.kind {
	case domainGroup:
		total := 0
		for _, ni := range p.c.domains[g.idx] {
			total += p.c.nodes[ni].gpus
		}
		return total
	case switchGroup:
		return p.c.swTotal[g.idx]
	}
	return p.c.gpus
}

// finish computes the normalized scores, the weighted score and the rank
// key of fairshare.md §9.4.
func (p *planner) finish(cand *Candidate, hmin int, loose bool) {
	sc := &cand.Scores
	switch p.req.Within {
	case ScopeDomain:
		cand.PreferredMet = sc.Domains == 1 && !loose
	case ScopeLeaf:
		cand.PreferredMet = sc.Leaves == 1
	default:
		cand.PreferredMet = true
	}
	top := p.c.depth
	sc.SLCA = 1
	if top > hmin {
		sc.SLCA = max(0, float64(top-sc.LCALevel)/float64(top-hmin))
	}
	maxLeaf := 0
	for l := range p.c.switches {
		if p.c.switches[l].level == 0 {
			maxLeaf = max(maxLeaf, p.c.swTotal[l])
		}
	}
	k1min := 1
	if maxLeaf > 0 {
		k1min = (p.need + maxLeaf - 1) / maxLeaf
	}
	sc.SSpan = math.Min(1, float64(k1min)/float64(max(1, sc.Leaves)))
	sc.SDomains = 1
	if sc.Domains > 0 {
		sc.SDomains = 1 / float64(sc.Domains)
	}
	w := p.cfg.Weights
	normCost := math.Min(1, sc.Preemption/p.jobSeconds())
	normWait := 0.0
	if p.cfg.Horizon > 0 {
		normWait = math.Min(1, sc.WaitSeconds/p.cfg.Horizon.Seconds())
	}
	sc.Weighted = w.LCA*sc.SLCA + w.Span*sc.SSpan + w.Domains*sc.SDomains + w.Frag*sc.SFrag + w.Keep*sc.SKeep -
		w.Preemption*normCost - w.Wait*normWait
	miss := 0.0
	if !cand.PreferredMet {
		miss = 1
	}
	class := float64(slices.Index(classNames[:], cand.Class))
	cand.RankKey = []float64{class, miss, float64(sc.LCALevel), float64(sc.Leaves), float64(sc.Domains),
		float64(sc.NodeSlack), -round6(sc.SFrag), -round6(sc.SKeep), sc.Preemption, sc.WaitSeconds}
}

// jobSeconds is the request's GPU-seconds, its duration taken as at
// least an hour: what preemption costs are measured against.
func (p *planner) jobSeconds() float64 {
	return float64(p.need) * math.Max(p.req.Duration.Seconds(), 3600)
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
