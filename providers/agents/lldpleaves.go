package agents

import (
	"cmp"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/providers"
)

// lldpPaths places the nodes whose reports carry LLDP neighbors (and no
// fabric path from a metadata service) under their leaf group: the leaf
// switches their fabric NICs reach, one per rail, as one switch of the
// tree named by its leaves ("leaf-a0+leaf-a1"). Nodes whose NICs reach
// the same leaves share a group; a node that reaches fewer of them (a
// link down) joins the one group whose leaves include its own. A switch
// is known by its chassis ID and named by the system name most of the
// reports that see it give. Each node's group comes from its own report
// alone, so a report that claims leaves it is not cabled to moves no
// other node. Above the leaves nothing is known from the hosts: the
// groups are the tree's roots.
func lldpPaths(fresh map[string]providers.AgentReport) map[string][]string {
	tuples := map[string][]string{} // node → its leaves' chassis IDs, sorted
	names := map[string]map[string]int{}
	for node, r := range fresh {
		if len(r.Facts.Fabric) > 0 || len(r.Facts.LLDP) == 0 {
			continue
		}
		var ids []string
		for _, n := range r.Facts.LLDP {
			if !slices.Contains(ids, n.ChassisID) {
				ids = append(ids, n.ChassisID)
			}
			if names[n.ChassisID] == nil {
				names[n.ChassisID] = map[string]int{}
			}
			names[n.ChassisID][cmp.Or(n.SysName, n.ChassisID)]++
		}
		slices.Sort(ids)
		tuples[node] = ids
	}
	if len(tuples) == 0 {
		return nil
	}
	leafName := switchNames(names)
	groups := groupTuples(tuples)
	out := make(map[string][]string, len(tuples))
	named := map[string][]string{} // group key → its path, built once
	for node, t := range tuples {
		key := groups[strings.Join(t, "\x00")]
		if named[key] == nil {
			ids := strings.Split(key, "\x00")
			parts := make([]string, len(ids))
			for i, id := range ids {
				parts[i] = leafName[id]
			}
			slices.Sort(parts)
			named[key] = []string{strings.Join(parts, "+")}
		}
		out[node] = named[key]
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

// switchNames names each chassis ID by the system name most reports
// give it (ties: the first in order); a name two switches would share
// gets the chassis ID after it.
func switchNames(votes map[string]map[string]int) map[string]string {
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
