package fabric

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// Group is one switch of the reduced tree: one or more interchangeable
// physical switches.
type Group struct {
	// ID is the ID of the first member in natural order.
	ID string
	// DisplayName is the first member's display name, followed by
	// " (+N)" when N more switches were collapsed into the group.
	DisplayName string
	// Members are the IDs of the physical switches, in natural order.
	Members []string
	// Level is 0 for leaves and one more for each tier above.
	Level int
	// Parent is the ID of the parent group; empty for a root.
	Parent string
	// UplinkGbps is the fastest cable from a member to a member of the
	// parent group; 0 for a root or when unknown.
	UplinkGbps uint32
	// Hosts are the cluster hosts under a leaf group, in natural order.
	Hosts []string
}

// Tree is a reduced switch tree. It is immutable.
type Tree struct {
	groups    []Group
	paths     [][]topology.SwitchInfo // per group, closest first
	hostGroup map[string]int
	excluded  []string
	unreached []string
	chosen    []Choice
}

func (r *reducer) tree() *Tree {
	f := r.f
	t := &Tree{groups: make([]Group, len(r.groups)), hostGroup: map[string]int{}, chosen: r.chosen}
	for i, g := range r.groups {
		out := Group{Level: g.level, UplinkGbps: g.uplink, Members: make([]string, len(g.members))}
		for j, m := range g.members {
			out.Members[j] = f.switches[m].id
		}
		first := &f.switches[g.members[0]]
		out.ID = first.id
		out.DisplayName = first.display
		if len(g.members) > 1 {
			name := first.display
			if name == "" {
				name = first.id
			}
			out.DisplayName = fmt.Sprintf("%s (+%d)", name, len(g.members)-1)
		}
		if g.level == 0 {
			for _, h := range g.children {
				out.Hosts = append(out.Hosts, f.hosts[h])
				t.hostGroup[f.hosts[h]] = i
			}
			hostlist.Sort(out.Hosts)
		}
		t.groups[i] = out
	}
	for i, g := range r.groups {
		if g.parent >= 0 {
			t.groups[i].Parent = t.groups[g.parent].ID
		}
	}
	t.paths = make([][]topology.SwitchInfo, len(r.groups))
	for i := range r.groups {
		var path []topology.SwitchInfo
		for g := int32(i); g >= 0; g = r.groups[g].parent {
			path = append(path, topology.SwitchInfo{
				ID: t.groups[g].ID, DisplayName: t.groups[g].DisplayName, LinkSpeedGbps: t.groups[g].UplinkGbps,
			})
		}
		t.paths[i] = path
	}
	for i := range f.switches {
		s := &f.switches[i]
		switch {
		case r.groupOf[i] >= 0:
		case s.foreign != "" || r.off[i]:
			t.excluded = append(t.excluded, s.id)
		default:
			t.unreached = append(t.unreached, s.id)
		}
	}
	hostlist.Sort(t.excluded)
	hostlist.Sort(t.unreached)
	return t
}

// Chosen lists the hosts placed under one of several leaf groups
// (Fabric.ChooseLeaves), in host order.
func (t *Tree) Chosen() []Choice { return t.chosen }

// LogChosen warns, once, of the hosts placed under one of several leaf
// groups, naming the first ten ("gpu001 under <leaf> (not <other>)") and
// the rule; provider and source say whose fabric it is.
func (t *Tree) LogChosen(log *slog.Logger, provider, source string) {
	if len(t.chosen) == 0 {
		return
	}
	parts := make([]string, 0, min(len(t.chosen), 11))
	for i, c := range t.chosen {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(t.chosen)-10))
			break
		}
		parts = append(parts, fmt.Sprintf("%s under %s (not %s)", c.Host, c.Leaf, strings.Join(c.Others, ", ")))
	}
	log.Warn(provider+": hosts whose HCAs are under leaf switches that carry different hosts were each placed under one "+
		"(the leaf with most of the host's HCAs, then the one with fewer hosts, then the first by ID; set hcas or hcaGUIDs to choose a rail)",
		"source", source, "count", len(t.chosen), "placed", strings.Join(parts, "; "))
}

// Groups returns the switch groups, leaves first (ascending level).
func (t *Tree) Groups() []Group { return t.groups }

// Path returns the switches above host, closest first, ready for
// topology.Builder.AddPath; nil when the host is under no leaf. The slice
// is shared: callers must not modify it.
func (t *Tree) Path(host string) []topology.SwitchInfo {
	g, ok := t.hostGroup[host]
	if !ok {
		return nil
	}
	return t.paths[g]
}

// Hosts returns every host under a leaf, in natural order.
func (t *Tree) Hosts() []string {
	out := make([]string, 0, len(t.hostGroup))
	for h := range t.hostGroup {
		out = append(out, h)
	}
	hostlist.Sort(out)
	return out
}

// Excluded returns the IDs of the foreign switches left out, in natural
// order.
func (t *Tree) Excluded() []string { return t.excluded }

// Unreached returns the IDs of the switches that are neither foreign nor
// reachable upwards from a leaf (isolated, or only behind foreign
// switches), in natural order.
func (t *Tree) Unreached() []string { return t.unreached }
