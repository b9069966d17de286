package neighbor

import (
	"cmp"
	"slices"
	"strings"
)

// LeafGroup is the leaf switches one or more hosts' fabric NICs reach,
// one per rail, as one switch of the tree.
type LeafGroup struct {
	// Name is the group's switch name: its leaves' names joined by "+"
	// in order ("leaf-a0+leaf-a1").
	Name string
	// Chassis are its leaves' chassis IDs, sorted.
	Chassis []string
	// Names maps each leaf's chassis ID to its name.
	Names map[string]string
}

// Leaves groups hosts by the leaf switches their neighbors name (host →
// its NICs' neighbors): nodes whose NICs reach the same leaves share a
// group; a node that reaches fewer of them (a link down) joins the one
// group whose leaves include its own. A switch is known by its chassis
// ID and named by the system name most of the hosts that see it give
// (one two switches would share gets the chassis ID after it). Each
// node's group comes from its own neighbors alone, so a host that claims
// leaves it is not cabled to moves no other node and renames no switch
// that more hosts name. Hosts without neighbors are left out; every
// other host is in the result, groups shared by pointer.
func Leaves(hosts map[string][]Neighbor) map[string]*LeafGroup {
	tuples := map[string][]string{} // host → its leaves' chassis IDs, sorted
	votes := map[string]map[string]int{}
	for host, ns := range hosts {
		if len(ns) == 0 {
			continue
		}
		var ids []string
		for _, n := range ns {
			if !slices.Contains(ids, n.ChassisID) {
				ids = append(ids, n.ChassisID)
			}
			if votes[n.ChassisID] == nil {
				votes[n.ChassisID] = map[string]int{}
			}
			votes[n.ChassisID][cmp.Or(n.SysName, n.ChassisID)]++
		}
		slices.Sort(ids)
		tuples[host] = ids
	}
	if len(tuples) == 0 {
		return nil
	}
	leafName := NameByVotes(votes)
	groups := groupTuples(tuples)
	out := make(map[string]*LeafGroup, len(tuples))
	made := map[string]*LeafGroup{} // group key → the group, built once
	for host, t := range tuples {
		key := groups[strings.Join(t, "\x00")]
		g := made[key]
		if g == nil {
			ids := strings.Split(key, "\x00")
			g = &LeafGroup{Chassis: ids, Names: make(map[string]string, len(ids))}
			parts := make([]string, len(ids))
			for i, id := range ids {
				parts[i] = leafName[id]
				g.Names[id] = leafName[id]
			}
			slices.Sort(parts)
			g.Name = strings.Join(parts, "+")
			made[key] = g
		}
		out[host] = g
	}
	return out
}

// groupTuples maps each distinct tuple of leaves to its group's: the
// one tuple of other nodes that includes all of it and that more nodes
// share, or itself when there is none or more than one. Wider tuples
// are found through the leaves they hold, so the cost grows with the
// distinct tuples, not with the nodes squared.
func groupTuples(tuples map[string][]string) map[string]string {
	support := map[string]int{}
	distinct := map[string][]string{}
	for _, t := range tuples {
		key := strings.Join(t, "\x00")
		support[key]++
		distinct[key] = t
	}
	byLeaf := map[string][]string{} // leaf → the distinct tuples holding it
	for key, t := range distinct {
		for _, id := range t {
			byLeaf[id] = append(byLeaf[id], key)
		}
	}
	out := make(map[string]string, len(distinct))
	for key, t := range distinct {
		out[key] = key
		found := ""
		for _, wider := range byLeaf[t[0]] {
			u := distinct[wider]
			if len(u) <= len(t) || support[wider] <= support[key] || !includes(u, t) {
				continue
			}
			if found != "" {
				found = "" // two wider groups: no way to choose
				break
			}
			found = wider
		}
		if found != "" {
			out[key] = found
		}
	}
	return out
}

// includes reports whether sorted u holds every element of sorted t.
func includes(u, t []string) bool {
	for _, x := range t {
		if _, ok := slices.BinarySearch(u, x); !ok {
			return false
		}
	}
	return true
}

// NameByVotes names each switch (by chassis ID) by the name with most
// votes (ties: the first in order); a name two switches would share gets
// the chassis ID after it ("spine-1-aa:bb:...").
func NameByVotes(votes map[string]map[string]int) map[string]string {
	out := make(map[string]string, len(votes))
	users := map[string]int{}
	for id, v := range votes {
		best := ""
		for name, n := range v {
			if best == "" || n > v[best] || (n == v[best] && name < best) {
				best = name
			}
		}
		out[id] = best
		users[best]++
	}
	for id, name := range out {
		if users[name] > 1 {
			out[id] = name + "-" + id
		}
	}
	return out
}
