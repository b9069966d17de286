package fabric

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/internal/hostlist"
)

// group is a set of interchangeable switches at one level.
type group struct {
	members  []int32 // switch indexes, natural order of ID
	children []int32 // sorted: host IDs for leaves, group indexes above
	level    int
	parent   int32 // group index; -1 for a root
	uplink   uint32
}

type reducer struct {
	f       *Fabric
	groups  []group
	groupOf []int32 // switch index -> group index; -1 while unplaced
	current []int32 // groups of the level just placed
	level   int
	// hosts are the cluster hosts attached to each switch, less those
	// whose leaf was chosen elsewhere (ChooseLeaves); off marks the
	// switches that held hosts only so: never placed, never crossed.
	hosts  [][]int32
	off    []bool
	chosen []Choice
}

func newReducer(f *Fabric) *reducer {
	r := &reducer{f: f, groupOf: make([]int32, len(f.switches)), hosts: make([][]int32, len(f.switches)), off: make([]bool, len(f.switches))}
	for i := range r.groupOf {
		r.groupOf[i] = -1
		r.hosts[i] = f.switches[i].hosts
	}
	return r
}

// candidate is a switch with the sorted, distinct children it would have.
type candidate struct {
	members  []int32
	children []int32
}

// leaves places the switches that hold cluster hosts. With ChooseLeaves,
// a host under leaf groups that cannot be merged is placed under one of
// them (choose) and the leaves are grouped again without it elsewhere.
func (r *reducer) leaves() error {
	for {
		var cands []candidate
		for i := range r.f.switches {
			if len(r.hosts[i]) == 0 {
				continue
			}
			cands = append(cands, candidate{members: []int32{int32(i)}, children: sortedUnique(slices.Clone(r.hosts[i]))})
		}
		if len(cands) == 0 {
			return ErrNoLeaves
		}
		groups, conflicts := r.merge(cands)
		if len(conflicts) == 0 {
			r.current = groups
			return nil
		}
		if !r.f.chooseLeaves {
			return r.ambiguous(conflicts)
		}
		for _, c := range conflicts {
			r.choose(c)
		}
		r.groups = r.groups[:0]
		for i := range r.groupOf {
			r.groupOf[i] = -1
		}
	}
}

// choose places the host of c under one of the leaf groups c.parents:
// the one holding most of the host's end points, then the one with
// fewer hosts (a host's own leaf rather than a storage or service leaf
// that many hosts share), then the first by switch ID; the host is taken off the
// other groups' switches, and a switch left with no host is off.
func (r *reducer) choose(c conflict) {
	count := func(g int32) int {
		n := 0
		for _, m := range r.groups[g].members {
			for _, h := range r.hosts[m] {
				if h == c.child {
					n++
				}
			}
		}
		return n
	}
	best := slices.MaxFunc(c.parents, func(a, b int32) int {
		return cmp.Or(cmp.Compare(count(a), count(b)), cmp.Compare(len(r.groups[b].children), len(r.groups[a].children)),
			r.f.compareIDs(r.groups[b].members[0], r.groups[a].members[0]))
	})
	ch := Choice{Host: r.f.hosts[c.child], Leaf: r.f.switches[r.groups[best].members[0]].id}
	for _, g := range c.parents {
		if g == best {
			continue
		}
		ch.Others = append(ch.Others, r.f.switches[r.groups[g].members[0]].id)
		for _, m := range r.groups[g].members {
			r.hosts[m] = slices.DeleteFunc(slices.Clone(r.hosts[m]), func(h int32) bool { return h == c.child })
			r.off[m] = len(r.hosts[m]) == 0
		}
	}
	r.chosen = append(r.chosen, ch)
}

// ambiguous is the error of hosts under leaf groups that cannot be
// merged.
func (r *reducer) ambiguous(conflicts []conflict) error {
	slices.SortFunc(conflicts, func(a, b conflict) int { return hostlist.Compare(r.f.hosts[a.child], r.f.hosts[b.child]) })
	var errs []error
	for _, c := range firstN(conflicts) {
		errs = append(errs, fmt.Errorf("host %q is under leaf switches %s: %w",
			r.f.hosts[c.child], r.groupLabels(c.parents), ErrAmbiguousLeaf))
	}
	return withMore(errs, len(conflicts), "hosts")
}

// nextLevel places the parents of the current level; it leaves current
// empty when there are none.
func (r *reducer) nextLevel() error {
	byCand := map[int32][]int32{}
	for _, g := range r.current {
		for _, m := range r.groups[g].members {
			for n := range r.f.switches[m].nbrs {
				if r.groupOf[n] >= 0 || r.f.switches[n].foreign != "" || r.off[n] {
					continue
				}
				byCand[n] = append(byCand[n], g)
			}
		}
	}
	if len(byCand) == 0 {
		r.current = nil
		return nil
	}
	ids := make([]int32, 0, len(byCand))
	for n := range byCand {
		ids = append(ids, n)
	}
	r.f.natural(ids)
	cands := make([]candidate, 0, len(ids))
	for _, n := range ids {
		cands = append(cands, candidate{members: []int32{n}, children: sortedUnique(byCand[n])})
	}
	r.level++
	groups, conflicts := r.merge(cands)
	if len(conflicts) > 0 {
		slices.SortFunc(conflicts, func(a, b conflict) int {
			return r.f.compareIDs(r.groups[a.child].members[0], r.groups[b.child].members[0])
		})
		var errs []error
		for _, c := range firstN(conflicts) {
			errs = append(errs, fmt.Errorf("switches %s (level %d) have uplinks to %s, whose sets of children differ: %w",
				r.groupLabel(c.child), r.level-1, r.groupLabels(c.parents), ErrNotATree))
		}
		return withMore(errs, len(conflicts), "switch groups")
	}
	for _, p := range groups {
		for _, c := range r.groups[p].children {
			r.groups[c].parent = p
			r.groups[c].uplink = r.uplink(c, p)
		}
	}
	r.current = groups
	return nil
}

// uplink is the fastest cable from a member of group c to one of p.
func (r *reducer) uplink(c, p int32) uint32 {
	var best uint32
	for _, m := range r.groups[c].members {
		for n, speed := range r.f.switches[m].nbrs {
			if r.groupOf[n] == p {
				best = max(best, speed)
			}
		}
	}
	return best
}

// absorb merges degraded copies into the group they are copies of, and
// returns the indexes of the groups left. merged is sorted by descending
// number of children. A group whose children are a strict subset of those
// of exactly one maximal group T (a spine or rail leaf with a missing
// cable) joins T — unless two of T's subsets are disjoint: then T spans
// several groups (a storage leaf shared by the hosts of several leaves,
// an aggregation switch) rather than copying one, and nothing joins it.
func absorb(merged []candidate) []int {
	containing := map[int32][]int{}
	for i := range merged {
		for _, ch := range merged[i].children {
			containing[ch] = append(containing[ch], i)
		}
	}
	supersets := func(i int) []int {
		var out []int
		for _, k := range containing[merged[i].children[0]] {
			if k != i && len(merged[k].children) > len(merged[i].children) && isSubset(merged[i].children, merged[k].children) {
				out = append(out, k)
			}
		}
		return out
	}
	top := make([]int, len(merged)) // the one maximal superset, or -1
	subs := map[int][]int{}
	for i := range merged {
		top[i] = -1
		var maximal []int
		for _, k := range supersets(i) {
			if len(supersets(k)) == 0 {
				maximal = append(maximal, k)
			}
		}
		if len(maximal) == 1 {
			top[i] = maximal[0]
			subs[maximal[0]] = append(subs[maximal[0]], i)
		}
	}
	for t, ss := range subs {
		if anyDisjoint(merged, ss) {
			for _, i := range ss {
				top[i] = -1
			}
			continue
		}
		for _, i := range ss {
			merged[t].members = append(merged[t].members, merged[i].members...)
		}
	}
	var kept []int
	for i := range merged {
		if top[i] < 0 {
			kept = append(kept, i)
		}
	}
	return kept
}

// anyDisjoint reports whether two of the groups share no child.
func anyDisjoint(merged []candidate, idx []int) bool {
	for a := range idx {
		for b := a + 1; b < len(idx); b++ {
			if !intersects(merged[idx[a]].children, merged[idx[b]].children) {
				return true
			}
		}
	}
	return false
}

// intersects reports whether sorted a and b share an element.
func intersects(a, b []int32) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			return true
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return false
}

// conflict is a child claimed by several new groups.
type conflict struct {
	child   int32
	parents []int32
}

// merge turns candidates into groups at r.level: candidates with
// identical children are one group, then degraded copies are absorbed
// (see absorb). It returns the new groups and the children claimed by
// more than one of them.
func (r *reducer) merge(cands []candidate) ([]int32, []conflict) {
	byKey := map[string]int{}
	var merged []candidate
	for _, c := range cands {
		k := key(c.children)
		if i, ok := byKey[k]; ok {
			merged[i].members = append(merged[i].members, c.members...)
			continue
		}
		byKey[k] = len(merged)
		merged = append(merged, candidate{members: slices.Clone(c.members), children: c.children})
	}
	for i := range merged {
		r.f.natural(merged[i].members)
	}
	slices.SortStableFunc(merged, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(len(b.children), len(a.children)), r.f.compareIDs(a.members[0], b.members[0]))
	})
	kept := absorb(merged)
	out := make([]int32, 0, len(kept))
	claims := map[int32][]int32{}
	for _, k := range kept {
		c := merged[k]
		r.f.natural(c.members)
		g := int32(len(r.groups))
		r.groups = append(r.groups, group{members: c.members, children: c.children, level: r.level, parent: -1})
		for _, m := range c.members {
			r.groupOf[m] = g
		}
		for _, ch := range c.children {
			claims[ch] = append(claims[ch], g)
		}
		out = append(out, g)
	}
	var conflicts []conflict
	for ch, ps := range claims {
		if len(ps) > 1 {
			conflicts = append(conflicts, conflict{child: ch, parents: ps})
		}
	}
	slices.SortFunc(conflicts, func(a, b conflict) int { return cmp.Compare(a.child, b.child) })
	return out, conflicts
}

func (f *Fabric) compareIDs(a, b int32) int {
	return hostlist.Compare(f.switches[a].id, f.switches[b].id)
}

// groupLabel names a group by its members.
func (r *reducer) groupLabel(g int32) string {
	ms := r.groups[g].members
	names := make([]string, 0, min(len(ms), 4))
	for i, m := range ms {
		if i == 3 && len(ms) > 4 {
			names = append(names, fmt.Sprintf("and %d more", len(ms)-3))
			break
		}
		names = append(names, r.f.label(m))
	}
	return "[" + strings.Join(names, ", ") + "]"
}

func (r *reducer) groupLabels(gs []int32) string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = r.groupLabel(g)
	}
	return strings.Join(out, " and ")
}

// key encodes sorted int32s as a map key.
func key(xs []int32) string {
	b := make([]byte, 0, 4*len(xs))
	for _, x := range xs {
		b = append(b, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
	}
	return string(b)
}

func sortedUnique(xs []int32) []int32 {
	slices.Sort(xs)
	return slices.Compact(xs)
}

// isSubset reports whether sorted a is a subset of sorted b.
func isSubset(a, b []int32) bool {
	if len(a) > len(b) {
		return false
	}
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j == len(b) || b[j] != x {
			return false
		}
		j++
	}
	return true
}

func firstN(cs []conflict) []conflict {
	return cs[:min(len(cs), maxReported)]
}

// withMore joins errs and says how many more of what were not listed.
func withMore(errs []error, total int, what string) error {
	if total > len(errs) {
		errs = append(errs, fmt.Errorf("and %d more %s", total-len(errs), what))
	}
	return errors.Join(errs...)
}
