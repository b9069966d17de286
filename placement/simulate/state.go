package simulate

import (
	"container/heap"
	"fmt"
	"math"
	"slices"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/topology"
)

// snode is one node's occupancy during a replay.
type snode struct {
	name string
	gpus int
	free int
	leaf int // switch index; -1 when the node has no switch
}

// sswitch is one switch of the replayed topology.
type sswitch struct {
	level    int
	parent   int
	children []int
	nodes    []int // nodes directly below
}

// state is the cluster during a replay: the topology, read only, and the
// free GPUs of every node.
type state struct {
	graph    *topology.Graph
	within   placement.Scope
	nodes    []snode
	switches []sswitch
	// tops are the top-level items of the tree: root switches, then
	// nodes under no switch (as node items).
	tops   []item
	leaves []int // switches with nodes, in graph order
	// groups are the scope groups a constrained job must fit in: the
	// leaves' or the domains' nodes.
	groups  [][]int
	groupOf []int // per node, its group; -1 when in none
	version int   // bumped by every apply
	capsOf  map[int]capCache
	// scratch holds shadow's buffers between calls.
	scratch struct {
		run          []running
		free, groups []int
	}
	order []int // every node index, in graph order
	gpus  int
	// free and partFree are the free GPUs of the cluster, and those on
	// partly used nodes (some GPUs used, some free), kept by apply.
	free, partFree int
	// nodeGPUs is the most common GPU count of a node with GPUs; jobs of
	// a multiple of it take whole nodes.
	nodeGPUs int
}

// item is a switch (sw >= 0) or a node with no switch (sw < 0).
type item struct{ sw, node int }

// newState returns the empty cluster of g, with the groups of scope
// within.
func newState(g *topology.Graph, within placement.Scope) (*state, error) {
	s := &state{graph: g, within: within, capsOf: map[int]capCache{}}
	swIdx := s.addSwitches(g)
	s.addNodes(g, swIdx)
	if s.gpus == 0 {
		return nil, fmt.Errorf("%w: the model has no GPUs", ErrScenario)
	}
	s.free = s.gpus
	for i := range s.switches {
		if len(s.switches[i].nodes) > 0 {
			s.leaves = append(s.leaves, i)
		}
	}
	s.groups = s.scopeGroups(g)
	s.groupOf = make([]int, len(s.nodes))
	for i := range s.groupOf {
		s.groupOf[i] = -1
	}
	for gi, grp := range s.groups {
		for _, n := range grp {
			s.groupOf[n] = gi
		}
	}
	return s, nil
}

// addSwitches adds g's switches, and the root switches to the tops, and
// returns the index of each switch ID.
func (s *state) addSwitches(g *topology.Graph) map[string]int {
	swIdx := make(map[string]int, len(g.Switches()))
	for i, sw := range g.Switches() {
		swIdx[sw.ID] = i
	}
	for _, sw := range g.Switches() {
		ss := sswitch{level: sw.Level, parent: -1}
		if sw.Parent != "" {
			ss.parent = swIdx[sw.Parent]
		}
		for _, c := range sw.Children {
			ss.children = append(ss.children, swIdx[c])
		}
		s.switches = append(s.switches, ss)
	}
	for i := range s.switches {
		if s.switches[i].parent < 0 {
			s.tops = append(s.tops, item{sw: i, node: -1})
		}
	}
	return swIdx
}

// addNodes adds g's nodes below their leaves (the tops for those with
// GPUs and no leaf), counts the GPUs and sets nodeGPUs to the most
// common GPU count (the larger of equals).
func (s *state) addNodes(g *topology.Graph, swIdx map[string]int) {
	counts := map[int]int{}
	for i, n := range g.Nodes() {
		sn := snode{name: n.Name, gpus: n.GPUs, free: n.GPUs, leaf: -1}
		if n.Leaf != "" {
			sn.leaf = swIdx[n.Leaf]
			s.switches[sn.leaf].nodes = append(s.switches[sn.leaf].nodes, i)
		} else if n.GPUs > 0 {
			s.tops = append(s.tops, item{sw: -1, node: i})
		}
		s.nodes = append(s.nodes, sn)
		s.order = append(s.order, i)
		s.gpus += n.GPUs
		if n.GPUs > 0 {
			counts[n.GPUs]++
		}
	}
	for g, c := range counts {
		if c > counts[s.nodeGPUs] || c == counts[s.nodeGPUs] && g > s.nodeGPUs {
			s.nodeGPUs = g
		}
	}
}

// scopeGroups returns the groups a constrained job must fit in: the
// leaves' nodes, the domains' or none.
func (s *state) scopeGroups(g *topology.Graph) [][]int {
	var groups [][]int
	switch s.within {
	case placement.ScopeLeaf:
		for _, l := range s.leaves {
			groups = append(groups, s.switches[l].nodes)
		}
	case placement.ScopeDomain:
		idx := make(map[string]int, len(g.Nodes()))
		for i, n := range g.Nodes() {
			idx[n.Name] = i
		}
		for _, d := range g.Domains() {
			grp := make([]int, 0, len(d.Nodes))
			for _, n := range d.Nodes {
				grp = append(grp, idx[n])
			}
			groups = append(groups, grp)
		}
	}
	return groups
}

// shape is a job as the policies see it: pods of per GPUs each, as many
// on a node as fit; a constrained job must fit in one group.
type shape struct {
	pods, per   int
	constrained bool
	wholeNodes  bool
}

// shapeOf returns the shape of a job of gpus GPUs: up to a node's GPUs it
// is one pod on one node; a multiple of a node's GPUs takes whole nodes;
// anything else is single GPUs anywhere. It is constrained when one
// group of the scope can hold it on an empty cluster.
func (s *state) shapeOf(gpus int) shape {
	var sh shape
	switch {
	case gpus <= s.nodeGPUs:
		sh = shape{pods: 1, per: gpus}
	case gpus%s.nodeGPUs == 0:
		sh = shape{pods: gpus / s.nodeGPUs, per: s.nodeGPUs, wholeNodes: true}
	default:
		sh = shape{pods: gpus, per: 1}
	}
	for _, grp := range s.groups {
		if s.capacity(grp, sh.per, true) >= sh.pods {
			sh.constrained = true
			break
		}
	}
	return sh
}

// podsOn returns the pods of per GPUs node n holds (empty: when idle).
func (s *state) podsOn(n, per int, empty bool) int {
	free := s.nodes[n].free
	if empty {
		free = s.nodes[n].gpus
	}
	return free / per
}

// capacity returns the pods of per GPUs the nodes hold.
func (s *state) capacity(nodes []int, per int, empty bool) int {
	c := 0
	for _, n := range nodes {
		c += s.podsOn(n, per, empty)
	}
	return c
}

// fits reports whether the job fits on the cluster now, by capacity
// alone (a policy may still find no room).
func (s *state) fits(sh shape) bool {
	c := s.caps(sh.per)
	if sh.constrained {
		return c.group >= sh.pods
	}
	return c.total >= sh.pods
}

// capCache is the cluster's capacity in pods of one size, valid while
// version is the state's.
type capCache struct {
	version      int
	total, group int // pods on the cluster; most pods in one group
}

// caps returns the capacity in pods of per GPUs, cached until the next
// apply.
func (s *state) caps(per int) capCache {
	if c, ok := s.capsOf[per]; ok && c.version == s.version {
		return c
	}
	c := capCache{version: s.version, total: s.capacity(s.order, per, false)}
	for _, grp := range s.groups {
		c.group = max(c.group, s.capacity(grp, per, false))
	}
	s.capsOf[per] = c
	return c
}

// shadow returns when a job of shape sh could start by capacity if the
// running jobs end as planned and nothing else starts: EASY backfill's
// reservation for the oldest waiting job. It is +Inf when never.
func (s *state) shadow(run []running, sh shape) float64 {
	// A heap of the running jobs, popped by end until the job fits:
	// usually a few pops, not a sort of them all.
	h := runHeap(append(s.scratch.run[:0], run...))
	heap.Init(&h)
	free := append(s.scratch.free[:0], make([]int, len(s.nodes))...)
	groups := append(s.scratch.groups[:0], make([]int, len(s.groups))...)
	s.scratch.run, s.scratch.free, s.scratch.groups = h, free, groups
	total := 0
	for i := range s.nodes {
		free[i] = s.nodes[i].free
		p := free[i] / sh.per
		total += p
		if g := s.groupOf[i]; g >= 0 {
			groups[g] += p
		}
	}
	for h.Len() > 0 {
		r := heap.Pop(&h).(running)
		for _, t := range r.takes {
			before := free[t.node] / sh.per
			free[t.node] += t.pods * r.per
			d := free[t.node]/sh.per - before
			total += d
			if g := s.groupOf[t.node]; g >= 0 {
				groups[g] += d
			}
		}
		if !sh.constrained && total >= sh.pods || sh.constrained && slices.Max(groups) >= sh.pods {
			return r.end
		}
	}
	return math.Inf(1)
}

// switchCaps returns every switch's pods of per GPUs in its subtree.
func (s *state) switchCaps(per int) []int {
	caps := make([]int, len(s.switches))
	for i := range s.nodes {
		if l := s.nodes[i].leaf; l >= 0 {
			caps[l] += s.podsOn(i, per, false)
		}
	}
	// Switches come in graph order, not by level: add children's
	// capacity level by level, lowest first.
	maxLevel := 0
	for i := range s.switches {
		maxLevel = max(maxLevel, s.switches[i].level)
	}
	for lvl := 0; lvl < maxLevel; lvl++ {
		for i := range s.switches {
			if s.switches[i].level == lvl && s.switches[i].parent >= 0 {
				caps[s.switches[i].parent] += caps[i]
			}
		}
	}
	return caps
}

// take is the pods a job holds on one node.
type take struct{ node, pods int }

// apply takes (sign 1) or returns (sign -1) a job's GPUs; it fails if a
// node would be overfilled or overfreed, which is a policy bug.
func (s *state) apply(takes []take, per, sign int) error {
	for _, t := range takes {
		n := &s.nodes[t.node]
		f := n.free - sign*t.pods*per
		if f < 0 || f > n.gpus || t.pods <= 0 {
			return fmt.Errorf("simulate: node %s: %d pods of %d GPUs with %d of %d free", n.name, t.pods, per, n.free, n.gpus)
		}
		s.partFree -= partlyFree(n.free, n.gpus)
		s.free += f - n.free
		n.free = f
		s.partFree += partlyFree(n.free, n.gpus)
	}
	s.version++
	return nil
}

// partlyFree is a node's free GPUs when it is partly used, else 0.
func partlyFree(free, gpus int) int {
	if free > 0 && free < gpus {
		return free
	}
	return 0
}

// lca returns the level of the lowest switch above every taken node, and
// the number of distinct leaves; a job on nodes under no common switch
// has level maxLevel+1.
func (s *state) lca(takes []take) (level, leaves int) {
	var distinct []int
	for _, t := range takes {
		if l := s.nodes[t.node].leaf; !slices.Contains(distinct, l) {
			distinct = append(distinct, l)
		}
	}
	top := 0
	for _, sw := range s.switches {
		top = max(top, sw.level)
	}
	if slices.Contains(distinct, -1) {
		return top + 1, len(distinct)
	}
	for c := distinct[0]; c >= 0; c = s.switches[c].parent {
		if s.below(c, distinct) {
			return s.switches[c].level, len(distinct)
		}
	}
	return top + 1, len(distinct)
}

// below reports whether every switch of leaves is c or under c.
func (s *state) below(c int, leaves []int) bool {
	for _, l := range leaves {
		for l >= 0 && l != c {
			l = s.switches[l].parent
		}
		if l != c {
			return false
		}
	}
	return true
}

// hops returns the switch hops between leaves a and b.
func (s *state) hops(a, b int) int {
	d := 0
	for a != b {
		if a < 0 || b < 0 {
			return 1 << 20
		}
		if s.switches[a].level <= s.switches[b].level {
			a = s.switches[a].parent
		} else {
			b = s.switches[b].parent
		}
		d++
	}
	return d
}
