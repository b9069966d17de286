package placement

import "time"

// Occupancy is how the GPUs of one node, or of every node under one
// switch, are held at the cluster's instant.
type Occupancy struct {
	GPUs int `json:"gpus"`
	Free int `json:"free"`
	// Allocated is held by work charged to its budget; Unallocated by
	// work that is not (it may be preempted at any time).
	Allocated   int `json:"allocated"`
	Unallocated int `json:"unallocated"`
	// Reclaimable is held by unallocated work or work past its
	// protection.
	Reclaimable int `json:"reclaimable"`
	// ProtectedUntil is the latest end of protection of the work held
	// (zero when no held work is still protected).
	ProtectedUntil time.Time `json:"protectedUntil,omitzero"`
	// Workloads counts the running records holding GPUs here.
	Workloads int `json:"workloads"`
}

func (o *Occupancy) add(p Occupancy) {
	o.GPUs += p.GPUs
	o.Free += p.Free
	o.Allocated += p.Allocated
	o.Unallocated += p.Unallocated
	o.Reclaimable += p.Reclaimable
	o.Workloads += p.Workloads
	if p.ProtectedUntil.After(o.ProtectedUntil) {
		o.ProtectedUntil = p.ProtectedUntil
	}
}

// node returns the occupancy of node i. A record on several nodes
// counts once per node.
func (c *Cluster) node(i int, cfg Config) Occupancy {
	n := &c.nodes[i]
	hold := c.holds(i)
	o := Occupancy{GPUs: n.gpus, Free: n.gpus - c.used[i], Workloads: len(hold)}
	for _, h := range hold {
		r := &c.records[h.rec]
		if r.Allocated {
			o.Allocated += h.gpus
		} else {
			o.Unallocated += h.gpus
		}
		if until := r.ProtectedUntil(cfg.MinRuntimeCap); until.After(c.now) {
			if until.After(o.ProtectedUntil) {
				o.ProtectedUntil = until
			}
		} else {
			o.Reclaimable += h.gpus
		}
	}
	return o
}

// NodeOccupancy returns the occupancy of the named node.
func (c *Cluster) NodeOccupancy(name string, cfg Config) (Occupancy, bool) {
	i, ok := c.nodeIdx[name]
	if !ok {
		return Occupancy{}, false
	}
	return c.node(i, cfg), true
}

// SwitchOccupancy returns the occupancy under every switch, keyed by
// switch ID; a record spread over several nodes counts once per node in
// Workloads.
func (c *Cluster) SwitchOccupancy(cfg Config) map[string]Occupancy {
	per := make([]Occupancy, len(c.switches))
	for i := range c.nodes {
		if l := c.nodes[i].leaf; l >= 0 {
			per[l].add(c.node(i, cfg))
		}
	}
	out := make(map[string]Occupancy, len(c.switches))
	// Switches are in the graph's order, leaves first: children are
	// complete before they are added to their parent.
	for i := range c.switches {
		if p := c.switches[i].parent; p >= 0 {
			per[p].add(per[i])
		}
		out[c.switches[i].id] = per[i]
	}
	return out
}

// Repeated returns the first of names that is named a second time, and
// true; "" and false when each is named once. A name c does not know
// counts as well as one it does; c's node index makes the check cost a
// lookup and a bit per name instead of a set of every name.
func (c *Cluster) Repeated(names []string) (string, bool) {
	seen := make([]bool, len(c.nodes))
	var others map[string]struct{}
	for _, n := range names {
		if i, ok := c.nodeIdx[n]; ok {
			if seen[i] {
				return n, true
			}
			seen[i] = true
			continue
		}
		if others == nil {
			others = make(map[string]struct{})
		}
		if _, dup := others[n]; dup {
			return n, true
		}
		others[n] = struct{}{}
	}
	return "", false
}
