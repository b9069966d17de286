package lldp

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/toposcope/toposcope/providers/lldp/neighbor"
)

// maxListed caps the lines of one kind of warning.
const maxListed = 20

// leafTargets returns the leaf switches the hosts name, each with the
// system name and the management addresses most hosts give it.
func leafTargets(hosts map[string][]neighbor.Neighbor) []target {
	names := map[string]map[string]int{}
	addrs := map[string]map[netip.Addr]int{}
	for _, ns := range hosts {
		for _, n := range ns {
			if names[n.ChassisID] == nil {
				names[n.ChassisID], addrs[n.ChassisID] = map[string]int{}, map[netip.Addr]int{}
			}
			if n.SysName != "" {
				names[n.ChassisID][n.SysName]++
			}
			for _, a := range n.MgmtIPs {
				if ip, err := netip.ParseAddr(a); err == nil {
					addrs[n.ChassisID][ip]++
				}
			}
		}
	}
	out := make([]target, 0, len(names))
	for _, c := range sortedKeys(names) {
		t := target{chassis: c, name: mostVoted(names[c])}
		t.addrs = slices.SortedFunc(maps.Keys(addrs[c]), func(a, b netip.Addr) int {
			return cmp.Or(addrs[c][b]-addrs[c][a], a.Compare(b))
		})
		out = append(out, t)
	}
	return out
}

// verify drops, from each host's neighbors, a claim that a walked switch
// contradicts: the switch shows the claimed port, with neighbors on it,
// and none of them is the host. A port the switch does not show, or
// shows without neighbors (hosts that listen rather than run lldpd), is
// kept. It returns a warning per dropped claim.
func verify(hosts map[string][]neighbor.Neighbor, views map[string]*View) []string {
	var warnings []string
	dropped := 0
	for _, host := range sortedKeys(hosts) {
		kept := hosts[host][:0:0]
		for _, n := range hosts[host] {
			others, contradicted := contradicts(views[n.ChassisID], n.PortID, host)
			if !contradicted {
				kept = append(kept, n)
				continue
			}
			if dropped++; dropped <= maxListed {
				warnings = append(warnings, fmt.Sprintf("host %s claims switch %s port %s, where the switch sees %v: claim dropped", host, cmp.Or(n.SysName, n.ChassisID), n.PortID, others))
			}
		}
		hosts[host] = kept
	}
	if dropped > maxListed {
		warnings = append(warnings, fmt.Sprintf("%d more claims the switches contradict dropped", dropped-maxListed))
	}
	return warnings
}

// contradicts reports whether view shows port with neighbors, none of
// which is host, and names them.
func contradicts(v *View, port, host string) ([]string, bool) {
	if v == nil {
		return nil, false
	}
	var nums []int
	for num, id := range v.Ports {
		if id == port {
			nums = append(nums, num)
		}
	}
	var others []string
	for _, r := range v.Remotes {
		if !slices.Contains(nums, r.LocalPort) {
			continue
		}
		if shortName(r.SysName) == shortName(host) {
			return nil, false
		}
		others = append(others, cmp.Or(r.SysName, r.ChassisID))
	}
	return others, len(others) > 0
}

// switchNames names each switch above the leaves (every chassis walked
// or named as a forwarding neighbor, and not a leaf): by its own system
// name when walked, else the name its neighbors' tables give most; a
// name two switches would share gets the chassis ID after it.
func switchNames(views map[string]*View, leaves map[string][]string) map[string]string {
	votes := map[string]map[string]int{}
	vote := func(chassis, name string, n int) {
		if leaves[chassis] != nil {
			return
		}
		if votes[chassis] == nil {
			votes[chassis] = map[string]int{}
		}
		votes[chassis][cmp.Or(name, chassis)] += n
	}
	for chassis, v := range views {
		vote(chassis, v.SysName, 1<<20) // its own name outweighs its neighbors'
		for _, r := range v.Remotes {
			if r.Switch() {
				vote(r.ChassisID, r.SysName, 1)
			}
		}
	}
	return neighbor.NameByVotes(votes)
}

// mostVoted returns the key with most votes (ties: the first in order).
func mostVoted(v map[string]int) string {
	best := ""
	for k, n := range v {
		if best == "" || n > v[best] || (n == v[best] && k < best) {
			best = k
		}
	}
	return best
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
