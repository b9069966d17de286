package netq

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/providers/infiniband/fabric"
	"github.com/toposcope/toposcope/topology"
)

// maxReported caps how many problems of one graph an error lists.
const maxReported = 10

// hostTier is the tier NetQ gives hosts (devices found through LLDP).
const hostTier = -1

// devices flattens tier groups into their devices, recursively.
func devices(nodes []GraphNode, out map[string]GraphNode) {
	for _, n := range nodes {
		if n.NodeType == "device" || len(n.CompoundedNodes) == 0 && n.NodeType != "tier" {
			out[n.ID] = n
		}
		devices(n.CompoundedNodes, out)
	}
}

// ends returns the two device IDs of a link: src and target, or the two
// halves of its ID ("<a>-*-<b>").
func ends(l GraphLink) (string, string, bool) {
	if l.Src != "" && l.Target != "" {
		return l.Src, l.Target, true
	}
	a, b, ok := strings.Cut(l.ID, "-*-")
	return a, b, ok && a != "" && b != ""
}

// addGraph adds one site's devices and links to the fabric.
func (p *Provider) addGraph(f *fabric.Fabric, prefix string, s site) error {
	devs := map[string]GraphNode{}
	devices(s.graph.Nodes, devs)
	var errs []error
	report := func(err error) {
		if len(errs) < maxReported {
			errs = append(errs, err)
		}
	}
	ids := make([]string, 0, len(devs))
	for id := range devs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	owner := map[string]string{}
	for _, id := range ids {
		d := devs[id]
		if d.Name == "" {
			report(fmt.Errorf("premises %q: node %q has no name: %w", s.name, id, ErrInconsistent))
			continue
		}
		if d.Tier == hostTier {
			if err := topology.CheckNodeName(d.Name); err != nil {
				report(fmt.Errorf("premises %q: host %q: %w", s.name, d.Name, err))
			}
			continue
		}
		if other, dup := owner[d.Name]; dup {
			report(fmt.Errorf("premises %q: nodes %q and %q are both switch %q: %w", s.name, other, id, d.Name, ErrInconsistent))
		}
		owner[d.Name] = id
		f.AddSwitch(prefix+d.Name, d.Name)
	}
	for _, l := range s.graph.Links {
		a, b, ok := ends(l)
		da, aok := devs[a]
		db, bok := devs[b]
		if !ok || !aok || !bok {
			report(fmt.Errorf("premises %q: link %q joins nodes that are not in the graph: %w", s.name, l.ID, ErrInconsistent))
			continue
		}
		p.addLink(f, prefix, da, db)
	}
	return errors.Join(errs...)
}

func (p *Provider) addLink(f *fabric.Fabric, prefix string, a, b GraphNode) {
	if a.Tier == hostTier {
		a, b = b, a
	}
	switch {
	case a.Tier == hostTier:
		// host to host: not part of the switch tree
	case b.Tier == hostTier:
		if p.hosts.Has(b.Name) {
			f.AttachHost(prefix+a.Name, b.Name)
		} else {
			f.MarkForeign(prefix+a.Name, b.Name)
		}
	default:
		f.Link(prefix+a.Name, prefix+b.Name, 0)
	}
}
