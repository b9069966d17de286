package placement

import "time"

// Capacity is the free and reclaimable GPUs of one switch or domain.
type Capacity struct {
	ID    string `json:"id"`
	Level int    `json:"level"`
	GPUs  int    `json:"gpus"`
	Free  int    `json:"free"`
	// Reclaimable is held by unallocated work or work past its protection.
	Reclaimable int `json:"reclaimable"`
}

// CapacityReport is GET /v1/capacity.
type CapacityReport struct {
	Now      time.Time  `json:"now"`
	GPUs     int        `json:"gpus"`
	Free     int        `json:"free"`
	Switches []Capacity `json:"switches"`
	Domains  []Capacity `json:"domains"`
	// LargestFree is the most free GPUs under one switch, per level.
	LargestFree map[int]int `json:"largestFreePerLevel"`
	// LargestFreeDomain is the most free GPUs in one domain.
	LargestFreeDomain int `json:"largestFreeDomain"`
}

// Capacity reports free and reclaimable GPUs per switch and domain.
func (c *Cluster) Capacity(cfg Config) CapacityReport {
	now := c.now
	free := make([]int, len(c.nodes))
	recl := make([]int, len(c.nodes))
	for i := range c.nodes {
		n := &c.nodes[i]
		free[i] = n.gpus - c.used[i]
		for _, h := range c.holds(i) {
			if !c.records[h.rec].ProtectedUntil(cfg.MinRuntimeCap).After(now) {
				recl[i] += h.gpus
			}
		}
	}
	rep := CapacityReport{Now: now, GPUs: c.gpus, LargestFree: map[int]int{}}
	rep.Switches = make([]Capacity, len(c.switches))
	for i := range c.switches {
		rep.Switches[i] = Capacity{ID: c.switches[i].id, Level: c.switches[i].level, GPUs: c.swTotal[i]}
	}
	for i := range c.nodes {
		rep.Free += free[i]
		if l := c.nodes[i].leaf; l >= 0 {
			rep.Switches[l].Free += free[i]
			rep.Switches[l].Reclaimable += recl[i]
		}
	}
	for i := range c.switches {
		if p := c.switches[i].parent; p >= 0 {
			rep.Switches[p].Free += rep.Switches[i].Free
			rep.Switches[p].Reclaimable += rep.Switches[i].Reclaimable
		}
		s := rep.Switches[i]
		rep.LargestFree[s.Level] = max(rep.LargestFree[s.Level], s.Free)
	}
	for d, nodes := range c.domains {
		dc := Capacity{ID: c.domainID[d], Level: -1}
		for _, ni := range nodes {
			dc.GPUs += c.nodes[ni].gpus
			dc.Free += free[ni]
			dc.Reclaimable += recl[ni]
		}
		rep.LargestFreeDomain = max(rep.LargestFreeDomain, dc.Free)
		rep.Domains = append(rep.Domains, dc)
	}
	return rep
}
