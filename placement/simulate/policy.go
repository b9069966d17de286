package simulate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/toposcope/toposcope/placement"
)

// Policy names.
const (
	// PolicyToposcope places with placement.Place: the best-ranked
	// candidate of free GPUs.
	PolicyToposcope = "toposcope"
	// PolicyFirstFit takes free GPUs in node order (the first group
	// that fits, for a constrained job).
	PolicyFirstFit = "firstfit"
	// PolicyBestFit is Kueue's TAS BestFit: down the switch tree, take
	// the fullest domains whole and the last one tightest-fitting
	// (placement.BestFit at every level).
	PolicyBestFit = "bestfit"
	// PolicySlurmTree is Slurm's topology/tree greedy: the lowest switch
	// that can hold the job, then its leaves by hop distance and best
	// fit, each leaf's nodes in order.
	PolicySlurmTree = "slurm-tree"
)

// Policies lists every policy, in report order.
func Policies() []string {
	return []string{PolicyToposcope, PolicyFirstFit, PolicyBestFit, PolicySlurmTree}
}

// chooser picks the nodes of one job, or returns nil when it finds no
// room now.
type chooser interface {
	choose(s *state, j *Job, sh shape, now float64) ([]take, error)
}

// fill takes pods from nodes in order.
func fill(s *state, nodes []int, sh shape) []take {
	var out []take
	need := sh.pods
	for _, n := range nodes {
		if need == 0 {
			break
		}
		if c := min(s.podsOn(n, sh.per, false), need); c > 0 {
			out = append(out, take{n, c})
			need -= c
		}
	}
	if need > 0 {
		return nil
	}
	return out
}

// tightestGroup returns the group with the fewest pods that still holds
// the job (first on ties), or -1.
func tightestGroup(s *state, sh shape) int {
	best, bestCap := -1, 0
	for i, grp := range s.groups {
		c := s.capacity(grp, sh.per, false)
		if c >= sh.pods && (best < 0 || c < bestCap) {
			best, bestCap = i, c
		}
	}
	return best
}

type firstFit struct{}

func (firstFit) choose(s *state, _ *Job, sh shape, _ float64) ([]take, error) {
	if !sh.constrained {
		return fill(s, s.order, sh), nil
	}
	for _, grp := range s.groups {
		if s.capacity(grp, sh.per, false) >= sh.pods {
			return fill(s, grp, sh), nil
		}
	}
	return nil, nil
}

type bestFit struct{}

func (bestFit) choose(s *state, _ *Job, sh shape, _ float64) ([]take, error) {
	if sh.constrained {
		g := tightestGroup(s, sh)
		if g < 0 {
			return nil, nil
		}
		return bestFitNodes(s, s.groups[g], sh.pods, sh.per, nil), nil
	}
	caps := s.switchCaps(sh.per)
	var out []take
	if !bestFitItems(s, s.tops, sh.pods, sh.per, caps, &out) {
		return nil, nil
	}
	return out, nil
}

// bestFitItems descends from items, taking need pods with BestFit at
// every level.
func bestFitItems(s *state, items []item, need, per int, caps []int, out *[]take) bool {
	c := make([]int, len(items))
	for i, it := range items {
		if it.sw >= 0 {
			c[i] = caps[it.sw]
		} else {
			c[i] = s.podsOn(it.node, per, false)
		}
	}
	takes := placement.BestFit(c, need)
	if takes == nil {
		return false
	}
	for i, t := range takes {
		if t == 0 {
			continue
		}
		switch it := items[i]; {
		case it.sw < 0:
			*out = append(*out, take{it.node, t})
		case len(s.switches[it.sw].children) > 0:
			kids := make([]item, len(s.switches[it.sw].children))
			for k, ch := range s.switches[it.sw].children {
				kids[k] = item{sw: ch, node: -1}
			}
			if !bestFitItems(s, kids, t, per, caps, out) {
				return false
			}
		default:
			*out = bestFitNodes(s, s.switches[it.sw].nodes, t, per, *out)
		}
	}
	return true
}

// bestFitNodes appends BestFit's takes of need pods from nodes to out.
func bestFitNodes(s *state, nodes []int, need, per int, out []take) []take {
	c := make([]int, len(nodes))
	for i, n := range nodes {
		c[i] = s.podsOn(n, per, false)
	}
	for i, t := range placement.BestFit(c, need) {
		if t > 0 {
			out = append(out, take{nodes[i], t})
		}
	}
	return out
}

type slurmTree struct{}

func (slurmTree) choose(s *state, _ *Job, sh shape, _ float64) ([]take, error) {
	if sh.constrained {
		// --switches=1: the leaf (group) that fits with the fewest free
		// wins (_topo_compare_switches), nodes taken in order.
		g := tightestGroup(s, sh)
		if g < 0 {
			return nil, nil
		}
		return fill(s, s.groups[g], sh), nil
	}
	caps := s.switchCaps(sh.per)
	top := -1
	for i := range s.switches {
		if caps[i] < sh.pods {
			continue
		}
		if top < 0 || s.switches[i].level < s.switches[top].level ||
			s.switches[i].level == s.switches[top].level && caps[i] < caps[top] {
			top = i
		}
	}
	if top < 0 {
		return fill(s, s.order, sh), nil // no common switch: TopoOptional
	}
	var leaves []int
	for _, l := range s.leaves {
		if caps[l] > 0 && s.below(top, []int{l}) {
			leaves = append(leaves, l)
		}
	}
	dist := make([]int, len(leaves))
	used := make([]bool, len(leaves))
	var out []take
	need := sh.pods
	for need > 0 {
		best := -1
		for i, l := range leaves {
			if used[i] {
				continue
			}
			if best < 0 || dist[i] < dist[best] || dist[i] == dist[best] && betterSwitch(caps[l], caps[leaves[best]], need) {
				best = i
			}
		}
		if best < 0 {
			return nil, nil
		}
		used[best] = true
		l := leaves[best]
		for _, n := range s.switches[l].nodes {
			if c := min(s.podsOn(n, sh.per, false), need); c > 0 {
				out = append(out, take{n, c})
				need -= c
			}
		}
		for i := range leaves {
			dist[i] += s.hops(leaves[i], l)
		}
	}
	return out, nil
}

// betterSwitch is _topo_compare_switches for two leaves of capacities a
// and b under the same parent: both fit, the smaller; one fits, it;
// neither, the larger.
func betterSwitch(a, b, need int) bool {
	switch fa, fb := a >= need, b >= need; {
	case fa && fb:
		return a < b
	case fa != fb:
		return fa
	default:
		return a > b
	}
}

// toposcope ranks candidates with placement.Place on the cluster as it
// is and takes the best of free GPUs. Standings are fixed: the
// simulator never preempts, so they do not change which free GPUs rank
// best.
type toposcope struct {
	cfg     placement.Config
	st      *placement.Standings
	base    *placement.Cluster // the empty cluster, occupied per decision
	index   map[string]int     // node name to index
	records []placement.Record // of the running jobs
	owner   []int              // per record, its job ID
	// occupied is base occupied by records at occupiedAt; nil after a
	// start or finish.
	occupied   *placement.Cluster
	occupiedAt float64
}

func newToposcope(s *state, accounts []string) (*toposcope, error) {
	cfg := placement.DefaultConfig()
	cfg.MaxCandidates = 1
	tree := placement.EqualTree(accounts)
	st, err := placement.Compute(tree, nil, epoch(0), s.gpus, cfg)
	if err != nil {
		return nil, err
	}
	base, err := placement.NewCluster(s.graph, nil, epoch(0))
	if err != nil {
		return nil, err
	}
	p := &toposcope{cfg: cfg, st: st, base: base, index: make(map[string]int, len(s.nodes))}
	for i, n := range s.nodes {
		p.index[n.name] = i
	}
	return p, nil
}

// started records a job's GPUs, one record per node, as running.
func (p *toposcope) started(s *state, j *Job, takes []take, per int, now float64) {
	w := strconv.Itoa(j.ID)
	for _, t := range takes {
		p.records = append(p.records, placement.Record{Account: j.Account, Workload: w, GPUs: t.pods * per,
			Nodes: []string{s.nodes[t.node].name}, Start: epoch(now)})
		p.owner = append(p.owner, j.ID)
	}
	p.occupied = nil
}

// finished drops a job's records.
func (p *toposcope) finished(j *Job) {
	k := 0
	for i := range p.records {
		if p.owner[i] != j.ID {
			p.records[k], p.owner[k] = p.records[i], p.owner[i]
			k++
		}
	}
	p.records, p.owner = p.records[:k], p.owner[:k]
	p.occupied = nil
}

func (p *toposcope) choose(s *state, j *Job, sh shape, now float64) ([]take, error) {
	req := placement.Request{Account: j.Account, Duration: secs(j.Duration)}
	switch {
	case sh.wholeNodes || sh.pods == 1:
		req.Nodes, req.GPUsPerNode = sh.pods, sh.per
	default:
		req.GPUs = sh.pods * sh.per
	}
	if sh.constrained {
		req.Within, req.Required = s.within, true
	}
	if p.occupied == nil || p.occupiedAt != now {
		cl, err := p.base.Occupy(p.records, epoch(now))
		if err != nil {
			return nil, err
		}
		p.occupied, p.occupiedAt = cl, now
	}
	cl := p.occupied
	res, err := placement.Place(cl, p.st, req, p.cfg)
	if errors.Is(err, placement.ErrNoCandidate) {
		return nil, nil // no room now: the job waits
	}
	if err != nil {
		return nil, fmt.Errorf("job %d: %w", j.ID, err)
	}
	for _, c := range res.Candidates {
		if c.Class != placement.ClassFree {
			continue
		}
		out := make([]take, 0, len(c.Nodes))
		for _, nt := range c.Nodes {
			if nt.GPUs%sh.per != 0 {
				return nil, fmt.Errorf("job %d: candidate takes %d GPUs on %s, not a multiple of %d", j.ID, nt.GPUs, nt.Node, sh.per)
			}
			out = append(out, take{p.index[nt.Node], nt.GPUs / sh.per})
		}
		slices.SortFunc(out, func(a, b take) int { return cmp.Compare(a.node, b.node) })
		return out, nil
	}
	return nil, nil
}
