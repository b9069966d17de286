package topology

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/toposcope/toposcope/internal/hostlist"
)

func (g *Graph) buildNodes(b *Builder) {
	g.nodes, g.idx = b.nodes, &nodeIndex{}
	byName := func(a, b Node) int { return naturalCmp(a.Name, b.Name) }
	if b.index == nil { // added in order: sorted, and no index made yet
		return
	}
	if slices.IsSortedFunc(g.nodes, byName) {
		g.idx.m = b.index
		return
	}
	slices.SortFunc(g.nodes, byName) // the index is made again on first use
}

func (g *Graph) buildSwitches(b *Builder) error {
	byID := make(map[string]*Switch, len(b.switches))
	for id, info := range b.switches {
		byID[id] = &Switch{
			ID: id, Name: SafeName(id), DisplayName: info.DisplayName,
			Parent: b.parent[id], LinkSpeedGbps: info.LinkSpeedGbps,
		}
	}
	for child, parent := range b.parent {
		byID[parent].Children = append(byID[parent].Children, child)
	}
	g.fillSwitchNodes(byID)
	if err := checkNameCollisions(byID); err != nil {
		return err
	}
	for _, s := range byID {
		slices.SortFunc(s.Children, func(a, c string) int { return naturalCmp(byID[a].Name, byID[c].Name) })
	}
	for _, s := range byID {
		setLevel(s, byID)
		g.depth = max(g.depth, s.Level+1)
	}
	g.switches = make([]Switch, 0, len(byID))
	for _, s := range byID {
		g.switches = append(g.switches, *s)
	}
	slices.SortFunc(g.switches, func(a, c Switch) int {
		return cmp.Or(cmp.Compare(a.Level, c.Level), naturalCmp(a.Name, c.Name))
	})
	g.swIndex = make(map[string]int, len(g.switches))
	for i := range g.switches {
		g.swIndex[g.switches[i].ID] = i
	}
	return nil
}

// fillSwitchNodes lists each leaf's nodes: counted first, so that every
// list is a slice of one backing array rather than a series of growing
// appends. g.nodes is sorted, so each list comes out sorted.
func (g *Graph) fillSwitchNodes(byID map[string]*Switch) {
	count := make(map[*Switch]int)
	total, run := 0, 0
	var last *Switch // a leaf's nodes mostly come in a row: look it up once
	for i := range g.nodes {
		if leaf := g.nodes[i].Leaf; leaf != "" {
			if last == nil || last.ID != leaf {
				if last != nil {
					count[last] += run
				}
				last, run = byID[leaf], 0
			}
			run++
			total++
		}
	}
	if last != nil {
		count[last] += run
	}
	backing := make([]string, total)
	for sw, n := range count {
		sw.Nodes, backing = backing[:0:n], backing[n:]
	}
	last = nil
	for i := range g.nodes {
		if leaf := g.nodes[i].Leaf; leaf != "" {
			if last == nil || last.ID != leaf {
				last = byID[leaf]
			}
			last.Nodes = append(last.Nodes, g.nodes[i].Name)
		}
	}
}

// setLevel computes Slurm's level: 0 with no child switch, else one more
// than the highest child. The tree is acyclic by now, and a switch with
// children has a level of at least 1 once computed, so 0 means "not yet".
func setLevel(s *Switch, byID map[string]*Switch) int {
	if s.Level > 0 || len(s.Children) == 0 {
		return s.Level
	}
	lvl := 0
	for _, c := range s.Children {
		lvl = max(lvl, setLevel(byID[c], byID)+1)
	}
	s.Level = lvl
	return lvl
}

func checkNameCollisions(byID map[string]*Switch) error {
	seen := make(map[string]string, len(byID))
	var errs []error
	for _, id := range sortedKeys(byID) {
		name := byID[id].Name
		if other, ok := seen[name]; ok {
			errs = append(errs, fmt.Errorf("switches %q and %q both map to name %q: %w", other, id, name, ErrNameCollision))
			continue
		}
		seen[name] = id
	}
	return errors.Join(errs...)
}

func (g *Graph) buildDomains(b *Builder) error {
	type acc struct {
		count int
		nodes []string
		subs  map[string][]string
	}
	// Count first, so that every domain's node list is a slice of one
	// backing array rather than a series of growing appends.
	byID := make(map[string]*acc)
	total := 0
	var last *acc // a domain's nodes mostly come in a row: look it up once
	lastID := ""
	for i := range g.nodes {
		if d := g.nodes[i].Domain; d != "" {
			if last == nil || d != lastID {
				if last = byID[d]; last == nil {
					last = &acc{}
					byID[d] = last
				}
				lastID = d
			}
			last.count++
			total++
		}
	}
	backing := make([]string, total)
	for _, a := range byID {
		a.nodes, backing = backing[:0:a.count], backing[a.count:]
	}
	last, lastID = nil, ""
	for i := range g.nodes {
		n := &g.nodes[i]
		if n.Domain == "" {
			continue
		}
		if last == nil || n.Domain != lastID {
			last, lastID = byID[n.Domain], n.Domain
		}
		a := last
		a.nodes = append(a.nodes, n.Name)
		if n.SubDomain != "" {
			if a.subs == nil {
				a.subs = map[string][]string{}
			}
			a.subs[n.SubDomain] = append(a.subs[n.SubDomain], n.Name)
		}
	}
	seen := make(map[string]string, len(byID))
	subSeen := make(map[string]string)
	var errs []error
	g.domains = make([]Domain, 0, len(byID))
	for _, id := range sortedKeys(byID) {
		a := byID[id]
		d := Domain{ID: id, Name: SafeName(id), Nodes: a.nodes}
		if other, ok := seen[d.Name]; ok {
			errs = append(errs, fmt.Errorf("domains %q and %q both map to name %q: %w", other, id, d.Name, ErrNameCollision))
		}
		seen[d.Name] = id
		for _, sid := range sortedKeys(a.subs) {
			sd := SubDomain{ID: sid, Name: SafeName(sid), Nodes: a.subs[sid]}
			if other, ok := subSeen[sid]; ok {
				errs = append(errs, fmt.Errorf("sub-domain %q is in domains %q and %q: %w", sid, other, id, ErrSubDomain))
			}
			subSeen[sid] = id
			d.SubDomains = append(d.SubDomains, sd)
		}
		slices.SortFunc(d.SubDomains, func(x, y SubDomain) int { return naturalCmp(x.Name, y.Name) })
		g.domains = append(g.domains, d)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	slices.SortFunc(g.domains, func(x, y Domain) int { return naturalCmp(x.Name, y.Name) })
	g.domIndex = make(map[string]int, len(g.domains))
	for i := range g.domains {
		g.domIndex[g.domains[i].ID] = i
	}
	return nil
}

// naturalCmp orders names as hostlists do: n2 before n10.
func naturalCmp(a, b string) int { return hostlist.Compare(a, b) }

func sortSwitchPtrs(s []*Switch) {
	slices.SortFunc(s, func(a, b *Switch) int { return naturalCmp(a.Name, b.Name) })
}

func sortByRank(d []*Domain, rank map[string]int) {
	slices.SortFunc(d, func(a, b *Domain) int { return cmp.Compare(rank[a.ID], rank[b.ID]) })
}
