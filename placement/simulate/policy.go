package simulate

import (
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
