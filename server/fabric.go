package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/topology"
)

// variantFabric is the derived document of GET /v1/fabric.
const variantFabric = "fabric"

// fabricJSON is the answer of GET /v1/fabric: the whole switch tree with
// every node, compact enough for a drawing of 100,000 nodes. Switches are
// listed depth first from the roots (a parent before its children), and
// the nodes of each switch grouped by accelerator domain; the nodes in
// that order, then the nodes under no switch, are the fabric order that
// GET /v1/fabric/occupancy follows.
type fabricJSON struct {
	Snapshot uint64        `json:"snapshot"`
	Counts   fabricCounts  `json:"counts"`
	Domains  []fabricNamed `json:"domains"`
	// SubDomains lists every sub-domain; Domain is its domain's index.
	SubDomains []fabricSub    `json:"subDomains"`
	Switches   []fabricSwitch `json:"switches"`
	// Unplaced are the nodes under no switch.
	Unplaced fabricNodes `json:"unplaced"`
}

// fabricCounts are the graph's totals.
type fabricCounts struct {
	Nodes    int `json:"nodes"`
	GPUs     int `json:"gpus"`
	Switches int `json:"switches"`
	Domains  int `json:"domains"`
}

// fabricNamed is a domain: its ID and name.
type fabricNamed struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// fabricSub is a sub-domain and the index of its domain.
type fabricSub struct {
	ID     string `json:"id"`
	Domain int    `json:"domain"`
}

// fabricSwitch is one switch and the nodes directly under it.
type fabricSwitch struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	DisplayName string `json:"displayName,omitempty"`
	Level       int    `json:"level"`
	// Parent is the index of the parent in the list; -1 for a root.
	Parent int `json:"parent"`
	fabricNodes
}

// fabricNodes are nodes in fabric order with, at the same index, their
// GPUs, domain and sub-domain (indexes into the answer's lists, -1 for
// none; the lists are left out when no node has one).
type fabricNodes struct {
	Nodes     []string  `json:"nodes,omitempty"`
	GPUs      gpuCounts `json:"gpus,omitzero"`
	Domain    []int     `json:"domain,omitempty"`
	SubDomain []int     `json:"subDomain,omitempty"`
}

// gpuCounts are GPUs per node, written as one number when every node has
// the same count.
type gpuCounts []int

// MarshalJSON writes the counts as one number when they are all equal.
func (g gpuCounts) MarshalJSON() ([]byte, error) {
	if len(g) > 0 && !slices.ContainsFunc(g, func(n int) bool { return n != g[0] }) {
		return strconv.AppendInt(nil, int64(g[0]), 10), nil
	}
	return json.Marshal([]int(g))
}

// fabricIndex places domains and sub-domains by their index in the answer.
type fabricIndex struct {
	g    *topology.Graph
	dom  map[string]int
	sub  map[string]int
	subs []fabricSub
}

func newFabricIndex(g *topology.Graph) *fabricIndex {
	x := &fabricIndex{g: g, dom: map[string]int{}, sub: map[string]int{}, subs: []fabricSub{}}
	for i, d := range g.Domains() {
		x.dom[d.ID] = i
		for _, s := range d.SubDomains {
			x.sub[s.ID] = len(x.subs)
			x.subs = append(x.subs, fabricSub{ID: s.ID, Domain: i})
		}
	}
	return x
}

// ordered returns names grouped by domain (in the order each first
// appears) and within a domain by sub-domain, nodes with no domain last;
// otherwise in their given order.
func (x *fabricIndex) ordered(names []string) []string {
	rank := map[string]int{}
	key := func(n *topology.Node) (int, int) {
		if n.Domain == "" {
			return len(names), 0
		}
		r, ok := rank[n.Domain]
		if !ok {
			r = len(rank)
			rank[n.Domain] = r
		}
		s, ok := x.sub[n.SubDomain]
		if !ok {
			s = -1
		}
		return r, s
	}
	type keyed struct {
		name   string
		d, sub int
	}
	ks := make([]keyed, len(names))
	for i, name := range names {
		k := keyed{name: name, d: len(names), sub: -1}
		if n, ok := x.g.Node(name); ok {
			k.d, k.sub = key(n)
		}
		ks[i] = k
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return a.sub - b.sub
	})
	out := make([]string, len(ks))
	for i := range ks {
		out[i] = ks[i].name
	}
	return out
}

// nodes describes names, already in fabric order.
func (x *fabricIndex) nodes(names []string) fabricNodes {
	if len(names) == 0 {
		return fabricNodes{}
	}
	out := fabricNodes{Nodes: names, GPUs: make(gpuCounts, len(names))}
	dom, sub := make([]int, len(names)), make([]int, len(names))
	anyDom, anySub := false, false
	for i, name := range names {
		dom[i], sub[i] = -1, -1
		n, ok := x.g.Node(name)
		if !ok {
			continue
		}
		out.GPUs[i] = n.GPUs
		if d, ok := x.dom[n.Domain]; ok && n.Domain != "" {
			dom[i], anyDom = d, true
		}
		if s, ok := x.sub[n.SubDomain]; ok && n.SubDomain != "" {
			sub[i], anySub = s, true
		}
	}
	if anyDom {
		out.Domain = dom
	}
	if anySub {
		out.SubDomain = sub
	}
	return out
}

// fabricWalk calls fn for each switch depth first from the roots with the
// index of its parent (-1 for a root) and its nodes in fabric order.
func fabricWalk(x *fabricIndex, fn func(s *topology.Switch, parent int, nodes []string)) {
	i := 0
	var walk func(s *topology.Switch, parent int)
	walk = func(s *topology.Switch, parent int) {
		me := i
		i++
		fn(s, parent, x.ordered(s.Nodes))
		for _, id := range s.Children {
			if ch, ok := x.g.Switch(id); ok {
				walk(ch, me)
			}
		}
	}
	for _, r := range x.g.Roots() {
		walk(r, -1)
	}
}

// buildFabric makes the answer of GET /v1/fabric for g.
func buildFabric(g *topology.Graph, snapshot uint64) fabricJSON {
	x := newFabricIndex(g)
	out := fabricJSON{Snapshot: snapshot, Domains: make([]fabricNamed, 0, len(g.Domains())), SubDomains: x.subs,
		Switches: make([]fabricSwitch, 0, len(g.Switches()))}
	for _, d := range g.Domains() {
		out.Domains = append(out.Domains, fabricNamed{ID: d.ID, Name: d.Name})
	}
	fabricWalk(x, func(s *topology.Switch, parent int, nodes []string) {
		out.Switches = append(out.Switches, fabricSwitch{ID: s.ID, Name: s.Name, DisplayName: s.DisplayName,
			Level: s.Level, Parent: parent, fabricNodes: x.nodes(nodes)})
	})
	out.Unplaced = x.nodes(x.ordered(g.NodesWithoutSwitch()))
	out.Counts = fabricCounts{Nodes: len(g.Nodes()), Switches: len(g.Switches()), Domains: len(g.Domains())}
	for _, n := range g.Nodes() {
		out.Counts.GPUs += n.GPUs
	}
	return out
}

// fabricOrder returns every node of g in fabric order.
func fabricOrder(g *topology.Graph) []string {
	x := newFabricIndex(g)
	out := make([]string, 0, len(g.Nodes()))
	fabricWalk(x, func(_ *topology.Switch, _ int, nodes []string) { out = append(out, nodes...) })
	return append(out, x.ordered(g.NodesWithoutSwitch())...)
}

// fabricDoc returns the encoded GET /v1/fabric of the derived graph, made
// once and kept with its other documents.
func (d *derived) fabricDoc(snapshot uint64) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if doc, ok := d.docs[variantFabric]; ok {
		return doc, nil
	}
	doc, err := json.Marshal(buildFabric(d.graph, snapshot))
	if err != nil {
		return nil, fmt.Errorf("fabric: %w", err)
	}
	d.docs[variantFabric] = doc
	return doc, nil
}

// fabric answers GET /v1/fabric?snapshot=ID: the switch tree with every
// node (see fabricJSON) of the current topology, encoded once and kept
// until it changes, or of a stored snapshot (bounded like GET /v1/graph's
// reads of older snapshots). ETag and If-None-Match give 304.
func (h *handlers) fabric(c *gin.Context) {
	if raw := c.Query("snapshot"); raw != "" {
		h.withSnapshot(c, raw, func(g *topology.Graph, id uint64, current bool) { h.sendFabric(c, g, id, current) })
		return
	}
	st, ok := h.current(c)
	if !ok {
		return
	}
	h.sendFabric(c, st.Graph, st.Snapshot.ID, true)
}

// sendFabric answers with the fabric document of g, snapshot snap.
func (h *handlers) sendFabric(c *gin.Context, g *topology.Graph, snap uint64, current bool) {
	etag := fmt.Sprintf(`"s%d-%s"`, snap, variantFabric)
	c.Header("ETag", etag)
	c.Header("X-Toposcope-Snapshot", strconv.FormatUint(snap, 10))
	if c.GetHeader("If-None-Match") == etag {
		c.Status(http.StatusNotModified)
		return
	}
	doc, err := h.derivedOf(g, current).fabricDoc(snap)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Content-Type", "application/json")
	c.Header("Content-Length", strconv.Itoa(len(doc)))
	c.Status(http.StatusOK)
	newStreamer(c, h.Config.WriteTimeout).write(doc)
}

// fabricHeld is one node of GET /v1/fabric/occupancy that holds work:
// [index in fabric order, allocated GPUs, unallocated GPUs, account index
// (-1: none), 1 when still protected else 0].
type fabricHeld [5]int

// fabricPlaces is each node's index in the fabric order of one graph,
// made once.
type fabricPlaces struct {
	once sync.Once
	pos  map[string]int
}

// fabricPos returns each node's index in the fabric order of d's graph.
func (d *derived) fabricPos() map[string]int {
	d.fabric.once.Do(func() {
		order := fabricOrder(d.graph)
		d.fabric.pos = make(map[string]int, len(order))
		for i, name := range order {
			d.fabric.pos[name] = i
		}
	})
	return d.fabric.pos
}

// fabricOccupancy answers GET /v1/fabric/occupancy: the nodes of the
// current topology that hold work, by their index in the fabric order of
// GET /v1/fabric of the same snapshot, with the account holding most of
// their GPUs. Nodes not listed are free.
func (h *handlers) fabricOccupancy(c *gin.Context) {
	o, ok := h.occupied(c)
	if !ok {
		return
	}
	cfg := placement.DefaultConfig()
	pos := h.derivedOf(o.State.Graph, true).fabricPos()
	accounts, byNode := nodeAccounts(o.View.Records, o.At)
	// Only the nodes of running records can hold GPUs.
	held := make([]fabricHeld, 0, len(byNode))
	for name, acct := range byNode {
		i, known := pos[name]
		occ, _ := o.Cluster.NodeOccupancy(name, cfg)
		if !known || occ.Allocated == 0 && occ.Unallocated == 0 {
			continue
		}
		prot := 0
		if !occ.ProtectedUntil.IsZero() {
			prot = 1
		}
		held = append(held, fabricHeld{i, occ.Allocated, occ.Unallocated, acct, prot})
	}
	slices.SortFunc(held, func(a, b fabricHeld) int { return a[0] - b[0] })
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	if err := enc.Encode(gin.H{"snapshot": o.State.Snapshot.ID, "now": o.At.UTC(), "gpus": o.Cluster.GPUs(),
		"free": o.Cluster.FreeGPUs(), "accounts": accounts, "held": held}); err != nil {
		h.fail(c, fmt.Errorf("fabric occupancy: %w", err))
		return
	}
	c.Data(http.StatusOK, "application/json", body.Bytes())
}

// nodeAccounts returns the accounts of the records running at the instant at
// (sorted) and, per node, the index of the account holding most of its
// GPUs (a record's GPUs spread evenly over its nodes, the first taking
// the remainder, as the ledger counts them).
func nodeAccounts(recs []placement.Record, at time.Time) ([]string, map[string]int) {
	per := map[string]map[string]int{}
	names := map[string]bool{}
	for i := range recs {
		r := &recs[i]
		if !r.Running(at) || len(r.Nodes) == 0 {
			continue
		}
		names[r.Account] = true
		each, extra := r.GPUs/len(r.Nodes), r.GPUs%len(r.Nodes)
		for k, n := range r.Nodes {
			m := per[n]
			if m == nil {
				m = map[string]int{}
				per[n] = m
			}
			m[r.Account] += each
			if k < extra {
				m[r.Account]++
			}
		}
	}
	accounts := make([]string, 0, len(names))
	for a := range names {
		accounts = append(accounts, a)
	}
	slices.Sort(accounts)
	index := make(map[string]int, len(accounts))
	for i, a := range accounts {
		index[a] = i
	}
	out := make(map[string]int, len(per))
	for n, m := range per {
		best, most := "", -1
		for a, g := range m {
			if g > most || (g == most && a < best) {
				best, most = a, g
			}
		}
		out[n] = index[best]
	}
	return accounts, out
}
