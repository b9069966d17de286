package ibsim

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// ModelSpec describes a cluster model compactly.
type ModelSpec struct {
	// Links are "parent>child" switch links.
	Links []string
	// Leaves maps a leaf switch to the hostlist of its hosts.
	Leaves map[string]string
	// Speeds are uplink speeds in Gb/s by switch (10, 20 or 40).
	Speeds map[string]uint32
	// Unplaced is a hostlist of hosts under no switch (no cable).
	Unplaced string
}

// Model builds the cluster model (a logical switch tree) that spec
// describes.
func Model(spec ModelSpec) (*topology.Graph, error) {
	b := topology.NewBuilder()
	declared := map[string]bool{}
	declare := func(id string) {
		if !declared[id] {
			declared[id] = true
			b.AddSwitch(topology.SwitchInfo{ID: id, LinkSpeedGbps: spec.Speeds[id]})
		}
	}
	for _, l := range spec.Links {
		parent, child, ok := strings.Cut(l, ">")
		if !ok {
			return nil, fmt.Errorf("link %q: want parent>child", l)
		}
		declare(parent)
		declare(child)
		b.Link(parent, child)
	}
	leaves := make([]string, 0, len(spec.Leaves))
	for leaf := range spec.Leaves {
		leaves = append(leaves, leaf)
	}
	slices.Sort(leaves)
	for _, leaf := range leaves {
		declare(leaf)
		hosts, err := hostlist.Expand(spec.Leaves[leaf])
		if err != nil {
			return nil, fmt.Errorf("leaf %q: %w", leaf, err)
		}
		for _, h := range hosts {
			b.AddNode(topology.Node{Name: h})
			b.AttachNode(leaf, h)
		}
	}
	if spec.Unplaced != "" {
		hosts, err := hostlist.Expand(spec.Unplaced)
		if err != nil {
			return nil, fmt.Errorf("unplaced: %w", err)
		}
		for _, h := range hosts {
			b.AddNode(topology.Node{Name: h})
		}
	}
	return b.Build()
}

// maxDiffs caps how many differences Compare lists.
const maxDiffs = 10

// Compare checks that got, the graph a provider built from f's fabric,
// equals model, the cluster model f was expanded from: the same nodes,
// each under the physical switches of its model path (after collapsing),
// the same number of switches at each level, and the model's link speeds
// where it gives them. It returns nil or an error listing the differences.
func Compare(got, model *topology.Graph, f *Fabric) error {
	var diffs []string
	add := func(format string, args ...any) {
		if len(diffs) < maxDiffs {
			diffs = append(diffs, fmt.Sprintf(format, args...))
		}
	}
	gotNames, wantNames := names(got), names(model)
	if !slices.Equal(gotNames, wantNames) {
		add("nodes %s, want %s", hostlist.Compress(gotNames), hostlist.Compress(wantNames))
	}
	byLogical := map[string]string{}
	for _, s := range got.Switches() {
		l, ok := f.Logical(s.ID)
		if !ok {
			add("switch %s (%s) is not a switch of the model", s.ID, s.DisplayName)
			continue
		}
		if other, dup := byLogical[l]; dup {
			add("switches %s and %s both stand for model switch %s (not collapsed)", other, s.ID, l)
		}
		byLogical[l] = s.ID
		m, ok := model.Switch(l)
		if !ok {
			add("switch %s stands for %s, which the model lacks", s.ID, l)
			continue
		}
		if s.Level != m.Level {
			add("switch %s (%s) is at level %d, want %d", s.ID, l, s.Level, m.Level)
		}
		if m.LinkSpeedGbps != 0 && s.LinkSpeedGbps != m.LinkSpeedGbps {
			add("switch %s (%s) has uplink %d Gb/s, want %d", s.ID, l, s.LinkSpeedGbps, m.LinkSpeedGbps)
		}
	}
	if len(got.Switches()) != len(model.Switches()) {
		add("%d switches, want %d", len(got.Switches()), len(model.Switches()))
	}
	for _, n := range model.Nodes() {
		want := pathIDs(model.Path(n.Name), nil)
		have := pathIDs(got.Path(n.Name), f)
		if !slices.Equal(have, want) {
			add("node %s is under %v, want %v", n.Name, have, want)
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return errors.New("graph differs from the model:\n  " + strings.Join(diffs, "\n  "))
}

func names(g *topology.Graph) []string {
	out := make([]string, 0, len(g.Nodes()))
	for _, n := range g.Nodes() {
		out = append(out, n.Name)
	}
	return out
}

// pathIDs maps a path to model switch IDs (through f when not nil).
func pathIDs(path []*topology.Switch, f *Fabric) []string {
	out := make([]string, 0, len(path))
	for _, s := range path {
		id := s.ID
		if f != nil {
			if l, ok := f.Logical(id); ok {
				id = l
			} else {
				id = "?" + id
			}
		}
		out = append(out, id)
	}
	return out
}
