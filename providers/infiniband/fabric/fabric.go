// Package fabric reduces a switch fabric — switches, the cables between
// them and the cluster hosts attached to them — to the switch tree that a
// topology.Graph (and Slurm's topology/tree) needs.
//
// The reduction, in order:
//
//  1. Leaves are the switches that hold at least one cluster host.
//  2. Leaves with the same set of hosts (the rails of a rail-optimised
//     design: one leaf per HCA of the same hosts) are one group; a leaf
//     whose hosts are a strict subset of exactly one other group's (a
//     missing cable) joins that group. A host still under two groups is
//     an error (ErrAmbiguousLeaf): select one HCA per host.
//  3. Upper tiers are found level by level: every switch not yet placed
//     and not excluded that is cabled to a switch of the current level is
//     a candidate parent, its children being the current-level groups it
//     is cabled to. Candidates with identical children (the redundant
//     spines of a fat tree) are one group, and a candidate whose children
//     are a strict subset of exactly one other candidate group's joins it.
//     A group left under two parent groups is an error (ErrNotATree).
//     Cables inside a level, or to lower levels, are ignored.
//  4. Switches marked foreign (they hold end points that are not cluster
//     hosts — another rail, storage — and no cluster host) are never
//     placed and never crossed.
//
// A group is named after its first member in natural order; its uplink
// speed is the fastest cable from a member to a member of its parent.
package fabric

import (
	"errors"
	"fmt"
	"slices"

	"github.com/toposcope/toposcope/internal/hostlist"
)

// Sentinel errors returned (wrapped) by Reduce.
var (
	// ErrNoLeaves means no switch holds a cluster host.
	ErrNoLeaves = errors.New("no switch holds a cluster host")
	// ErrAmbiguousLeaf means a host hangs under leaf switches that cannot
	// be merged into one group.
	ErrAmbiguousLeaf = errors.New("host under several leaf switches that cannot be merged")
	// ErrNotATree means a group of switches has uplinks to parent groups
	// that cannot be merged, so the fabric is no tree (a loop).
	ErrNotATree = errors.New("fabric cannot be reduced to a tree")
)

// maxReported caps how many hosts or groups an error lists.
const maxReported = 10

// Fabric is a switch fabric under construction. It is not safe for
// concurrent use.
type Fabric struct {
	ids      map[string]int32
	switches []swtch
	hostIDs  map[string]int32
	hosts    []string
	// chooseLeaves places a host under leaf groups that cannot be merged
	// under one of them (ChooseLeaves).
	chooseLeaves bool
}

// Choice is where Reduce placed a host whose end points are under leaf
// groups that cannot be merged (ChooseLeaves).
type Choice struct {
	// Host is the host; Leaf the first switch of the group it was
	// placed under; Others the first switches of the groups it was not.
	Host   string
	Leaf   string
	Others []string
}

// ChooseLeaves makes Reduce place a host whose end points (HCAs) are
// under leaf groups that cannot be merged (rails whose leaves carry
// different hosts) under one of them instead of failing with
// ErrAmbiguousLeaf: the group holding most of its end points, then the
// group with fewer hosts (its own leaf rather than a storage leaf many
// hosts share), then the one whose first switch ID comes first.
// The same rule holds for every host; Tree.Chosen lists each choice.
func (f *Fabric) ChooseLeaves() { f.chooseLeaves = true }

type swtch struct {
	id, display string
	foreign     string           // why the switch is foreign; "" when it is not
	nbrs        map[int32]uint32 // neighbour switch -> fastest cable in Gb/s
	hosts       []int32          // attached cluster hosts (may repeat)
}

// New returns an empty Fabric.
func New() *Fabric {
	return &Fabric{ids: make(map[string]int32), hostIDs: make(map[string]int32)}
}

// AddSwitch declares a switch. Declaring it again is allowed; the first
// non-empty display name is kept.
func (f *Fabric) AddSwitch(id, display string) {
	i := f.sw(id)
	if f.switches[i].display == "" {
		f.switches[i].display = display
	}
}

func (f *Fabric) sw(id string) int32 {
	if i, ok := f.ids[id]; ok {
		return i
	}
	i := int32(len(f.switches))
	f.ids[id] = i
	f.switches = append(f.switches, swtch{id: id, nbrs: map[int32]uint32{}})
	return i
}

// Link records a cable between two switches (declaring them if needed).
// Several cables between the same pair count once, at the fastest speed;
// a cable from a switch to itself is ignored.
func (f *Fabric) Link(a, b string, gbps uint32) {
	i, j := f.sw(a), f.sw(b)
	if i == j {
		return
	}
	f.switches[i].nbrs[j] = max(f.switches[i].nbrs[j], gbps)
	f.switches[j].nbrs[i] = max(f.switches[j].nbrs[i], gbps)
}

// AttachHost records that a cluster host has an end point on switch sw.
func (f *Fabric) AttachHost(sw, host string) {
	i := f.sw(sw)
	h, ok := f.hostIDs[host]
	if !ok {
		h = int32(len(f.hosts))
		f.hostIDs[host] = h
		f.hosts = append(f.hosts, host)
	}
	f.switches[i].hosts = append(f.switches[i].hosts, h)
}

// MarkForeign records that switch sw holds end points that are not
// cluster hosts; why says which (for logs). A foreign switch that also
// holds a cluster host is still a leaf.
func (f *Fabric) MarkForeign(sw, why string) {
	i := f.sw(sw)
	if f.switches[i].foreign == "" {
		f.switches[i].foreign = why
	}
}

// label names switch i for error messages.
func (f *Fabric) label(i int32) string {
	s := &f.switches[i]
	if s.display != "" && s.display != s.id {
		return fmt.Sprintf("%s (%s)", s.id, s.display)
	}
	return s.id
}

// Reduce computes the switch tree. It does not change the Fabric.
func (f *Fabric) Reduce() (*Tree, error) {
	r := newReducer(f)
	if err := r.leaves(); err != nil {
		return nil, err
	}
	for len(r.current) > 0 {
		if err := r.nextLevel(); err != nil {
			return nil, err
		}
	}
	return r.tree(), nil
}

// natural sorts switch indexes in natural order of ID.
func (f *Fabric) natural(members []int32) {
	slices.SortFunc(members, func(a, b int32) int { return hostlist.Compare(f.switches[a].id, f.switches[b].id) })
}
