package placement

import (
	"fmt"
	"slices"
	"time"

	"github.com/toposcope/toposcope/topology"
)

// holding is one running workload's GPUs on one node.
type holding struct {
	rec  int
	gpus int
}

// cnode is one node of the topology; what the records hold on it is
// in the Cluster's used and held, so that occupying a cluster copies
// no node.
type cnode struct {
	name   string
	gpus   int
	leaf   int // switch index; -1 if none
	domain int // domain index; -1 if none
}

type cswitch struct {
	id       string
	level    int
	parent   int
	children []int
	nodes    []int
}

// Cluster is the occupancy of a topology at one instant: which running
// records hold which GPUs. Build it once per ledger change and rank many
// requests on it.
type Cluster struct {
	now      time.Time
	records  []Record
	nodes    []cnode
	switches []cswitch
	domains  [][]int
	domainID []string
	depth    int
	gpus     int
	recNodes [][]holding // per record: (node index in rec, GPUs)
	running  []int       // indexes of records placed on nodes
	// size is, per record, the GPUs its workload holds in all: a
	// workload reported as a record per node is one victim.
	size    []int
	swTotal []int          // GPUs under each switch
	nodeIdx map[string]int // node name to index
	// used is, per node, the GPUs running records hold; held lists the
	// holdings (record index, GPUs) node by node, in record order, node
	// i's at held[heldAt[i]:heldAt[i+1]].
	used   []int
	held   []holding
	heldAt []int32
	// off marks the nodes no request may take (Only); nil: none.
	off []bool
}

// Only returns c with every node not named in keep unavailable: no
// request may take its GPUs, free or reclaimable (the nodes a
// scheduler's own filters left out). Names c does not know are ignored.
// c is unchanged.
func (c *Cluster) Only(keep []string) *Cluster {
	o := *c
	o.off = make([]bool, len(c.nodes))
	for i := range o.off {
		o.off[i] = true
	}
	for _, n := range keep {
		if i, ok := c.nodeIdx[n]; ok {
			o.off[i] = false
		}
	}
	return &o
}

// NewCluster places the running records (those with Nodes) on g at now.
// A record naming an unknown node, or overfilling a node, is an error
// wrapping ErrInvalid.
func NewCluster(g *topology.Graph, records []Record, now time.Time) (*Cluster, error) {
	c := &Cluster{depth: g.Depth(), nodeIdx: make(map[string]int, len(g.Nodes()))}
	swIdx := make(map[string]int, len(g.Switches()))
	for i, s := range g.Switches() {
		swIdx[s.ID] = i
	}
	for _, s := range g.Switches() {
		cs := cswitch{id: s.ID, level: s.Level, parent: -1}
		if s.Parent != "" {
			cs.parent = swIdx[s.Parent]
		}
		for _, ch := range s.Children {
			cs.children = append(cs.children, swIdx[ch])
		}
		c.switches = append(c.switches, cs)
	}
	domIdx := map[string]int{}
	for i, d := range g.Domains() {
		domIdx[d.ID] = i
		c.domainID = append(c.domainID, d.ID)
		c.domains = append(c.domains, make([]int, 0, len(d.Nodes)))
	}
	for i, n := range g.Nodes() {
		cn := cnode{name: n.Name, gpus: n.GPUs, leaf: -1, domain: -1}
		if n.Leaf != "" {
			cn.leaf = swIdx[n.Leaf]
			c.switches[cn.leaf].nodes = append(c.switches[cn.leaf].nodes, i)
		}
		if n.Domain != "" {
			cn.domain = domIdx[n.Domain]
			c.domains[cn.domain] = append(c.domains[cn.domain], i)
		}
		c.nodeIdx[n.Name] = i
		c.nodes = append(c.nodes, cn)
		c.gpus += n.GPUs
	}
	c.swTotal = make([]int, len(c.switches))
	for i := range c.nodes {
		if l := c.nodes[i].leaf; l >= 0 {
			c.swTotal[l] += c.nodes[i].gpus
		}
	}
	for i := range c.switches {
		if p := c.switches[i].parent; p >= 0 {
			c.swTotal[p] += c.swTotal[i]
		}
	}
	return c.Occupy(records, now)
}

// Occupy returns a cluster of the same topology occupied by records at
// now instead, as NewCluster would build it; c is unchanged and shares
// its topology, read only, with the result. Build the topology once and
// occupy it for every ledger change.
func (c *Cluster) Occupy(records []Record, now time.Time) (*Cluster, error) {
	o := *c
	o.now, o.records, o.recNodes, o.running = now, records, make([][]holding, len(records)), nil
	o.used = make([]int, len(c.nodes))
	at := make([]int32, len(c.nodes)+1) // holdings per node, then their offsets
	places := 0
	for ri := range records {
		places += len(records[ri].Nodes)
	}
	flat := make([]holding, 0, places) // every recNodes entry, in one allocation
	for ri := range records {
		r := &records[ri]
		if len(r.Nodes) == 0 || !r.Running(now) {
			continue
		}
		first := len(flat)
		per, extra := r.GPUs/len(r.Nodes), r.GPUs%len(r.Nodes)
		for k, name := range r.Nodes {
			ni, ok := o.nodeIdx[name]
			if !ok {
				return nil, fmt.Errorf("%w: record %q: unknown node %q", ErrInvalid, r.Workload, name)
			}
			g := per
			if k < extra {
				g++
			}
			if o.used[ni]+g > o.nodes[ni].gpus {
				return nil, fmt.Errorf("%w: record %q: node %q has %d GPUs, %d already held", ErrInvalid, r.Workload, name, o.nodes[ni].gpus, o.used[ni])
			}
			o.used[ni] += g
			at[ni+1]++
			flat = append(flat, holding{rec: ni, gpus: g})
		}
		o.recNodes[ri] = flat[first:len(flat):len(flat)]
		o.running = append(o.running, ri)
	}
	o.indexHeld(at)
	// size: each running record is numbered by its workload, and the
	// workloads' GPUs summed.
	o.size = make([]int, len(records))
	group := make(map[[2]string]int, len(o.running))
	var totals []int
	for _, ri := range o.running {
		k := [2]string{records[ri].Account, records[ri].Workload}
		gi, ok := group[k]
		if !ok {
			gi = len(totals)
			group[k] = gi
			totals = append(totals, 0)
		}
		totals[gi] += records[ri].GPUs
		o.size[ri] = gi
	}
	for _, ri := range o.running {
		o.size[ri] = totals[o.size[ri]]
	}
	return &o, nil
}

// indexHeld lays the running records' holdings out node by node, given
// each node's count in count[i+1].
func (c *Cluster) indexHeld(count []int32) {
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	next := slices.Clone(count[:len(count)-1])
	c.held = make([]holding, count[len(count)-1])
	for _, ri := range c.running {
		for _, h := range c.recNodes[ri] { // h.rec is the node there
			c.held[next[h.rec]] = holding{rec: ri, gpus: h.gpus}
			next[h.rec]++
		}
	}
	c.heldAt = count
}

// holds returns what the running records hold on node i.
func (c *Cluster) holds(i int) []holding { return c.held[c.heldAt[i]:c.heldAt[i+1]] }

// GPUs returns the cluster's total GPUs.
func (c *Cluster) GPUs() int { return c.gpus }

// FreeGPUs returns the GPUs no running record holds.
func (c *Cluster) FreeGPUs() int {
	free := 0
	for i := range c.nodes {
		free += c.nodes[i].gpus - c.used[i]
	}
	return free
}

// lca returns the lowest common switch of the nodes (-1: none).
func (c *Cluster) lca(nodes []int) int {
	cur := -1
	for k, ni := range nodes {
		s := c.nodes[ni].leaf
		if s < 0 {
			return -1
		}
		if k == 0 {
			cur = s
			continue
		}
		for cur >= 0 && s >= 0 && cur != s {
			lc, ls := c.switches[cur].level, c.switches[s].level
			if lc <= ls {
				cur = c.switches[cur].parent
			}
			if ls <= lc {
				s = c.switches[s].parent
			}
		}
		if cur < 0 || cur != s {
			return -1
		}
	}
	return cur
}
