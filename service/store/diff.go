package store

import (
	"slices"

	"github.com/toposcope/toposcope/topology"
)

// Placement is where a node sits: its leaf switch and its domains.
type Placement struct {
	Leaf      string `json:"leaf,omitempty"`
	Domain    string `json:"domain,omitempty"`
	SubDomain string `json:"subDomain,omitempty"`
}

// NodeMove is a node whose placement changed.
type NodeMove struct {
	Name string    `json:"name"`
	From Placement `json:"from"`
	To   Placement `json:"to"`
}

// SwitchChange is a switch that kept its ID but changed parent, level,
// display name or link speed.
type SwitchChange struct {
	ID         string `json:"id"`
	FromParent string `json:"fromParent,omitempty"`
	ToParent   string `json:"toParent,omitempty"`
	FromLevel  int    `json:"fromLevel"`
	ToLevel    int    `json:"toLevel"`
}

// Diff is what changed from one graph to another. Every list is in the
// graphs' deterministic order.
type Diff struct {
	// From and To are snapshot IDs when the graphs are snapshots.
	From uint64 `json:"from,omitempty"`
	To   uint64 `json:"to,omitempty"`

	NodesAdded      []string       `json:"nodesAdded"`
	NodesRemoved    []string       `json:"nodesRemoved"`
	NodesMoved      []NodeMove     `json:"nodesMoved"`
	SwitchesAdded   []string       `json:"switchesAdded"`
	SwitchesRemoved []string       `json:"switchesRemoved"`
	SwitchesChanged []SwitchChange `json:"switchesChanged"`
	DomainsAdded    []string       `json:"domainsAdded"`
	DomainsRemoved  []string       `json:"domainsRemoved"`
	// DomainsChanged are domains whose members or sub-domains changed.
	DomainsChanged []string `json:"domainsChanged"`
}

// DiffSummary counts the entries of a Diff.
type DiffSummary struct {
	NodesAdded      int `json:"nodesAdded"`
	NodesRemoved    int `json:"nodesRemoved"`
	NodesMoved      int `json:"nodesMoved"`
	SwitchesAdded   int `json:"switchesAdded"`
	SwitchesRemoved int `json:"switchesRemoved"`
	SwitchesChanged int `json:"switchesChanged"`
	DomainsAdded    int `json:"domainsAdded"`
	DomainsRemoved  int `json:"domainsRemoved"`
	DomainsChanged  int `json:"domainsChanged"`
}

// Summary counts d's entries.
func (d *Diff) Summary() DiffSummary {
	return DiffSummary{
		NodesAdded: len(d.NodesAdded), NodesRemoved: len(d.NodesRemoved), NodesMoved: len(d.NodesMoved),
		SwitchesAdded: len(d.SwitchesAdded), SwitchesRemoved: len(d.SwitchesRemoved), SwitchesChanged: len(d.SwitchesChanged),
		DomainsAdded: len(d.DomainsAdded), DomainsRemoved: len(d.DomainsRemoved), DomainsChanged: len(d.DomainsChanged),
	}
}

// Empty reports whether nothing changed.
func (d *Diff) Empty() bool { return d.Summary() == DiffSummary{} }

// Compare returns the diff from a to b. A nil a is an empty graph.
func Compare(a, b *topology.Graph) *Diff {
	if a == nil {
		a = &topology.Graph{}
	}
	d := &Diff{
		NodesAdded: []string{}, NodesRemoved: []string{}, NodesMoved: []NodeMove{},
		SwitchesAdded: []string{}, SwitchesRemoved: []string{}, SwitchesChanged: []SwitchChange{},
		DomainsAdded: []string{}, DomainsRemoved: []string{}, DomainsChanged: []string{},
	}
	for _, n := range b.Nodes() {
		old, ok := a.Node(n.Name)
		switch {
		case !ok:
			d.NodesAdded = append(d.NodesAdded, n.Name)
		case old.Leaf != n.Leaf || old.Domain != n.Domain || old.SubDomain != n.SubDomain:
			d.NodesMoved = append(d.NodesMoved, NodeMove{Name: n.Name, From: placementOf(old), To: placementOf(&n)})
		}
	}
	for _, n := range a.Nodes() {
		if _, ok := b.Node(n.Name); !ok {
			d.NodesRemoved = append(d.NodesRemoved, n.Name)
		}
	}
	for _, s := range b.Switches() {
		old, ok := a.Switch(s.ID)
		switch {
		case !ok:
			d.SwitchesAdded = append(d.SwitchesAdded, s.ID)
		case old.Parent != s.Parent || old.Level != s.Level || old.DisplayName != s.DisplayName || old.LinkSpeedGbps != s.LinkSpeedGbps:
			d.SwitchesChanged = append(d.SwitchesChanged, SwitchChange{
				ID: s.ID, FromParent: old.Parent, ToParent: s.Parent, FromLevel: old.Level, ToLevel: s.Level,
			})
		}
	}
	for _, s := range a.Switches() {
		if _, ok := b.Switch(s.ID); !ok {
			d.SwitchesRemoved = append(d.SwitchesRemoved, s.ID)
		}
	}
	for _, dom := range b.Domains() {
		old, ok := a.Domain(dom.ID)
		switch {
		case !ok:
			d.DomainsAdded = append(d.DomainsAdded, dom.ID)
		case !sameDomain(old, &dom):
			d.DomainsChanged = append(d.DomainsChanged, dom.ID)
		}
	}
	for _, dom := range a.Domains() {
		if _, ok := b.Domain(dom.ID); !ok {
			d.DomainsRemoved = append(d.DomainsRemoved, dom.ID)
		}
	}
	return d
}

func placementOf(n *topology.Node) Placement {
	return Placement{Leaf: n.Leaf, Domain: n.Domain, SubDomain: n.SubDomain}
}

func sameDomain(a, b *topology.Domain) bool {
	return slices.Equal(a.Nodes, b.Nodes) && slices.EqualFunc(a.SubDomains, b.SubDomains, func(x, y topology.SubDomain) bool {
		return x.ID == y.ID && slices.Equal(x.Nodes, y.Nodes)
	})
}

// CappedDiff is a Diff whose lists hold at most Limit entries each, with
// the complete counts beside them.
type CappedDiff struct {
	*Diff
	// Summary counts every entry, also those left out of the lists.
	Summary DiffSummary `json:"summary"`
	// Limit is the most entries a list holds.
	Limit int `json:"limit"`
	// Truncated reports whether some list was cut at Limit.
	Truncated bool `json:"truncated"`
}

// Capped returns d with each list cut to at most limit entries (the
// lists are shared with d, not copied).
func (d *Diff) Capped(limit int) *CappedDiff {
	out := &CappedDiff{Summary: d.Summary(), Limit: limit}
	c := *d
	c.NodesAdded = capList(c.NodesAdded, limit, &out.Truncated)
	c.NodesRemoved = capList(c.NodesRemoved, limit, &out.Truncated)
	c.NodesMoved = capList(c.NodesMoved, limit, &out.Truncated)
	c.SwitchesAdded = capList(c.SwitchesAdded, limit, &out.Truncated)
	c.SwitchesRemoved = capList(c.SwitchesRemoved, limit, &out.Truncated)
	c.SwitchesChanged = capList(c.SwitchesChanged, limit, &out.Truncated)
	c.DomainsAdded = capList(c.DomainsAdded, limit, &out.Truncated)
	c.DomainsRemoved = capList(c.DomainsRemoved, limit, &out.Truncated)
	c.DomainsChanged = capList(c.DomainsChanged, limit, &out.Truncated)
	out.Diff = &c
	return out
}

func capList[T any](s []T, limit int, cut *bool) []T {
	if len(s) <= limit {
		return s
	}
	*cut = true
	return s[:limit:limit]
}
