package server

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/topology"
)

// Caps of the view answers, so that one switch with very many nodes or a
// vague search cannot make an answer as large as the graph.
const (
	maxTreeNodes     = 2000
	defaultFindLimit = 20
	maxFindLimit     = 200
)

// treeSwitch is one switch of GET /v1/tree: what is below it and how its
// GPUs are held.
type treeSwitch struct {
	pathEntry
	DisplayName string `json:"displayName,omitempty"`
	Parent      string `json:"parent,omitempty"`
	Children    int    `json:"children"`
	topology.Aggregate
	Occupancy placement.Occupancy `json:"occupancy"`
}

// treeNode is one node directly under the switch asked for.
type treeNode struct {
	Name       string              `json:"name"`
	InstanceID string              `json:"instanceID,omitempty"`
	GPUs       int                 `json:"gpus"`
	Domain     string              `json:"domain,omitempty"`
	Occupancy  placement.Occupancy `json:"occupancy"`
}

// treeJSON is the answer of GET /v1/tree.
type treeJSON struct {
	Snapshot uint64             `json:"snapshot"`
	Total    topology.Aggregate `json:"total"`
	Depth    int                `json:"depth"`
	// Switch is the switch asked for; nil for the top of the tree.
	Switch *treeSwitch `json:"switch"`
	// Path lists the switches from the top down to Switch, itself
	// included.
	Path []pathEntry `json:"path"`
	// Children are its child switches (the roots at the top).
	Children []treeSwitch `json:"children"`
	// Nodes are the nodes directly under it, at most maxTreeNodes; at the
	// top, the nodes under no switch.
	Nodes          []treeNode `json:"nodes"`
	NodeCount      int        `json:"nodeCount"`
	NodesTruncated bool       `json:"nodesTruncated"`
}

// tree answers GET /v1/tree?switch=ID: one level of the switch tree,
// aggregated, with the occupancy from the placement ledger, so that a
// view of 100,000 nodes loads one switch at a time.
func (h *handlers) tree(c *gin.Context) {
	o, ok := h.occupied(c)
	if !ok {
		return
	}
	st, cl := o.State, o.Cluster
	g := st.Graph
	sum := h.derivedOf(g, true).Summary()
	cfg := placement.DefaultConfig()
	occ := cl.SwitchOccupancy(cfg)
	out := treeJSON{Snapshot: st.Snapshot.ID, Total: sum.Total, Depth: g.Depth(), Path: []pathEntry{}, Children: []treeSwitch{}, Nodes: []treeNode{}}
	describe := func(s *topology.Switch) treeSwitch {
		agg, _ := sum.Switch(s.ID)
		return treeSwitch{
			pathEntry: pathEntry{ID: s.ID, Name: s.Name, Level: s.Level}, DisplayName: s.DisplayName,
			Parent: s.Parent, Children: len(s.Children), Aggregate: agg, Occupancy: occ[s.ID],
		}
	}
	var children, nodes []string
	if id := c.Query("switch"); id != "" {
		s, found := g.Switch(id)
		if !found {
			h.fail(c, badParam("switch", "no switch "+strconv.Quote(id)))
			return
		}
		ts := describe(s)
		out.Switch = &ts
		out.Path = ancestors(g, s)
		children, nodes = s.Children, s.Nodes
	} else {
		for _, r := range g.Roots() {
			children = append(children, r.ID)
		}
		nodes = g.NodesWithoutSwitch()
	}
	for _, id := range children {
		s, _ := g.Switch(id)
		out.Children = append(out.Children, describe(s))
	}
	out.NodeCount = len(nodes)
	out.NodesTruncated = len(nodes) > maxTreeNodes
	for _, name := range nodes[:min(len(nodes), maxTreeNodes)] {
		n, _ := g.Node(name)
		o, _ := cl.NodeOccupancy(name, cfg)
		out.Nodes = append(out.Nodes, treeNode{Name: n.Name, InstanceID: n.InstanceID, GPUs: n.GPUs, Domain: n.Domain, Occupancy: o})
	}
	c.JSON(http.StatusOK, out)
}

// ancestors returns the path from the top down to s by its parents.
func ancestors(g *topology.Graph, s *topology.Switch) []pathEntry {
	var out []pathEntry
	for cur := s; cur != nil; {
		out = append(out, pathEntry{ID: cur.ID, Name: cur.Name, Level: cur.Level})
		if cur.Parent == "" {
			break
		}
		cur, _ = g.Switch(cur.Parent)
	}
	slices.Reverse(out)
	return out
}

// heatCell is one leaf switch of GET /v1/heatmap.
type heatCell struct {
	ID        string              `json:"id"`
	Name      string              `json:"name"`
	Nodes     int                 `json:"nodes"`
	Occupancy placement.Occupancy `json:"occupancy"`
}

// heatmap answers GET /v1/heatmap: every switch that has nodes directly
// under it, in fabric order (a depth-first walk from the roots), with the
// occupancy of its GPUs from the placement ledger.
func (h *handlers) heatmap(c *gin.Context) {
	o, ok := h.occupied(c)
	if !ok {
		return
	}
	st, cl, view := o.State, o.Cluster, o.View
	g := st.Graph
	occ := cl.SwitchOccupancy(placement.DefaultConfig())
	cells := []heatCell{}
	var walk func(s *topology.Switch)
	walk = func(s *topology.Switch) {
		if len(s.Nodes) > 0 {
			cells = append(cells, heatCell{ID: s.ID, Name: s.Name, Nodes: len(s.Nodes), Occupancy: occ[s.ID]})
		}
		for _, id := range s.Children {
			ch, _ := g.Switch(id)
			walk(ch)
		}
	}
	for _, r := range g.Roots() {
		walk(r)
	}
	c.JSON(http.StatusOK, gin.H{
		"snapshot": st.Snapshot.ID, "now": o.At.UTC(), "records": len(view.Records),
		"gpus": cl.GPUs(), "free": cl.FreeGPUs(), "leaves": cells,
	})
}

// findHit is one result of GET /v1/find.
type findHit struct {
	// Kind is node, switch or domain.
	Kind string `json:"kind"`
	ID   string `json:"id"`
	Name string `json:"name"`
	// Match says what matched: name, instanceID, id or displayName.
	Match string `json:"match"`
	// Path lists the switches from the top down to the node's leaf, or
	// to the switch itself; for a domain, to the leaf of its first node.
	Path []pathEntry `json:"path"`
}

// find answers GET /v1/find?q=TEXT&limit=N: nodes (by name or instance
// ID), switches (by ID, name or display name) and domains (by ID or
// name) whose key equals q come first, then those that contain it
// (case-insensitive), at most limit.
func (h *handlers) find(c *gin.Context) {
	st, ok := h.current(c)
	if !ok {
		return
	}
	q := strings.TrimSpace(c.Query("q"))
	if q == "" {
		h.fail(c, badParam("q", "give the text to look for"))
		return
	}
	limit, err := limitParam(c, defaultFindLimit, maxFindLimit)
	if err != nil {
		h.fail(c, err)
		return
	}
	g := st.Graph
	f := finder{q: q, lower: strings.ToLower(q), limit: limit, hits: []findHit{}}
	for pass := 0; pass < 2 && !f.full(); pass++ {
		f.exact = pass == 0
		for i := range g.Nodes() {
			n := &g.Nodes()[i]
			f.try("node", n.Name, n.Name, "name", n.Leaf, g)
			f.try("node", n.Name, n.InstanceID, "instanceID", n.Leaf, g)
		}
		for i := range g.Switches() {
			s := &g.Switches()[i]
			f.try("switch", s.ID, s.ID, "id", s.ID, g)
			f.try("switch", s.ID, s.Name, "name", s.ID, g)
			f.try("switch", s.ID, s.DisplayName, "displayName", s.ID, g)
		}
		for i := range g.Domains() {
			d := &g.Domains()[i]
			leaf := ""
			if len(d.Nodes) > 0 {
				if n, ok := g.Node(d.Nodes[0]); ok {
					leaf = n.Leaf
				}
			}
			f.try("domain", d.ID, d.ID, "id", leaf, g)
			f.try("domain", d.ID, d.Name, "name", leaf, g)
		}
	}
	c.JSON(http.StatusOK, gin.H{"snapshot": st.Snapshot.ID, "query": q, "hits": f.hits, "truncated": f.truncated})
}

// finder collects the hits of one search: first the exact pass, then the
// substring pass, each item once.
type finder struct {
	q, lower  string
	exact     bool
	limit     int
	hits      []findHit
	seen      map[string]bool
	truncated bool
}

func (f *finder) full() bool { return len(f.hits) >= f.limit }

func (f *finder) try(kind, id, key, match, leaf string, g *topology.Graph) {
	if key == "" {
		return
	}
	if f.exact {
		if key != f.q {
			return
		}
	} else if len(key) < len(f.q) || !strings.Contains(strings.ToLower(key), f.lower) {
		return
	}
	k := kind + "\x00" + id
	if f.seen[k] {
		return
	}
	if f.full() {
		f.truncated = true
		return
	}
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	f.seen[k] = true
	hit := findHit{Kind: kind, ID: id, Name: id, Match: match, Path: []pathEntry{}}
	if kind == "switch" {
		s, _ := g.Switch(id)
		hit.Name = s.Name
		hit.Path = ancestors(g, s)
	} else if s, ok := g.Switch(leaf); ok {
		hit.Path = ancestors(g, s)
	}
	if kind == "domain" {
		d, _ := g.Domain(id)
		hit.Name = d.Name
	}
	f.hits = append(f.hits, hit)
}
