package infiniband

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/providers/infiniband/fabric"
)

// ErrNoHCAMatch means a cluster host is in the fabric, but none of its
// HCAs is selected by the configured HCA filter.
var ErrNoHCAMatch = errors.New("no HCA of the host matches the HCA selection")

// ErrDuplicateSwitchName means two switches have the same name while
// switches are named by description.
var ErrDuplicateSwitchName = errors.New("two switches have the same name")

// reduced is the fabric of one ibnetdiscover output, reduced to a tree.
type reduced struct {
	tree *fabric.Tree
	// hcas lists, per cluster host, its selected HCAs.
	hcas map[string][]string
	// seen lists, per host, every named HCA ("mlx5_0 (guid)"), selected
	// or not.
	seen    map[string][]string
	cas     int
	unnamed int
	ignored int
}

// reduce turns parsed output into a switch tree: selected HCAs of cluster
// hosts attach their host to their switch, other named HCAs mark their
// switch foreign. On error the result still lists the hosts and HCAs seen
// (its tree is nil).
func (p *Provider) reduce(t *Topology) (*reduced, error) {
	r := &reduced{hcas: map[string][]string{}, seen: map[string][]string{}}
	ids, err := p.switchIDs(t)
	if err != nil {
		return r, err
	}
	f := fabric.New()
	if p.names.AllHCAs() {
		f.ChooseLeaves() // no rail selected: one rule for every host (fabric.ChooseLeaves)
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		switch n.Type {
		case Switch:
			f.AddSwitch(ids[n.GUID], switchName(n.Description))
			for _, l := range n.Links {
				if l.PeerType == Switch {
					f.Link(ids[n.GUID], ids[l.PeerGUID], l.Gbps())
				}
			}
		case CA:
			p.addCA(f, r, n, ids)
		}
	}
	for h := range r.hcas {
		slices.Sort(r.hcas[h])
		r.hcas[h] = slices.Compact(r.hcas[h])
	}
	tree, err := f.Reduce()
	if errors.Is(err, fabric.ErrNoLeaves) {
		return r, fmt.Errorf("%w: of %d CAs, %d have a host name matching hostPattern %q (%d unnamed, %d ignored) and none of those is a cluster host with an HCA selected by %s",
			err, r.cas, len(r.seen), p.cfg.HostPattern, r.unnamed, r.ignored, p.names.Selection())
	}
	if errors.Is(err, fabric.ErrAmbiguousLeaf) {
		return r, fmt.Errorf("%w\n(the hosts reach several fabrics or rails: select one with hcas or hcaGUIDs, or list the cluster's hosts in nodes)", err)
	}
	if err != nil {
		return r, err
	}
	r.tree = tree
	return r, nil
}

func (p *Provider) addCA(f *fabric.Fabric, r *reduced, n *Node, ids map[uint64]string) {
	r.cas++
	guids := []uint64{n.GUID}
	for _, l := range n.Links {
		guids = append(guids, l.PortGUID)
	}
	ca := p.names.Name(n.Description, guids...)
	if ca.Host == "" && !ca.Ignored && n.Mapped {
		ca = p.names.HostOnly(n.Description, guids...)
	}
	host, hca := ca.Host, ca.HCA
	switch {
	case ca.Ignored:
		r.ignored++
		return
	case host == "":
		r.unnamed++
		return
	}
	r.seen[host] = append(r.seen[host], fmt.Sprintf("%s (%s)", hca, FormatGUID(n.GUID)))
	use := ca.Selected && (p.cluster == nil || p.cluster[host])
	if use {
		r.hcas[host] = append(r.hcas[host], hca)
	}
	for _, l := range n.Links {
		if l.PeerType != Switch {
			continue
		}
		if use {
			f.AttachHost(ids[l.PeerGUID], host)
		} else {
			f.MarkForeign(ids[l.PeerGUID], n.Description)
		}
	}
}

// switchIDs maps switch GUIDs to the IDs the graph uses.
func (p *Provider) switchIDs(t *Topology) (map[uint64]string, error) {
	ids := make(map[uint64]string)
	owner := map[string]uint64{}
	var errs []error
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.Type != Switch {
			continue
		}
		id := FormatGUID(n.GUID)
		if p.cfg.SwitchIDs == SwitchIDsName {
			id = switchName(n.Description)
			if id == "" {
				id = FormatGUID(n.GUID)
			}
			if other, dup := owner[id]; dup {
				errs = append(errs, fmt.Errorf("switches %s and %s are both called %q (set switchIDs: guid): %w",
					FormatGUID(other), FormatGUID(n.GUID), id, ErrDuplicateSwitchName))
			}
			owner[id] = n.GUID
		}
		ids[n.GUID] = id
	}
	return ids, errors.Join(errs...)
}

// noMatch reports the hosts among names that are in the fabric but have
// no selected HCA.
func (p *Provider) noMatch(r *reduced, names []string) error {
	var bad []string
	for _, name := range names {
		if _, ok := r.hcas[name]; ok || len(r.seen[name]) == 0 || (p.cluster != nil && !p.cluster[name]) {
			continue
		}
		bad = append(bad, name)
	}
	if len(bad) == 0 {
		return nil
	}
	hostlist.Sort(bad)
	var errs []error
	for i, h := range bad {
		if i == maxParseErrors {
			errs = append(errs, fmt.Errorf("and %d more hosts (%s)", len(bad)-i, hostlist.Compress(bad[i:])))
			break
		}
		errs = append(errs, fmt.Errorf("host %q has HCAs %s, none selected by %s (list the cluster's hosts in nodes, or name hosts that are not compute nodes in notCompute): %w",
			h, strings.Join(r.seen[h], ", "), p.names.Selection(), ErrNoHCAMatch))
	}
	return errors.Join(errs...)
}
