// Package lldp is the provider of Ethernet (RoCE) fabrics from LLDP: the
// node agents report, for each GPU fabric NIC, the switch and port LLDP
// names at its other end (see providers/lldp/neighbor); hosts whose NICs
// reach the same leaves, one per rail, share a leaf group. Above the
// leaves it reads the switches themselves: the LLDP-MIB (lldpRemTable)
// of the leaf switches over SNMP v2c or v3, following their uplinks to
// the spines and cores. The switch graph is reduced to a tree by the
// same rules as InfiniBand fabrics (providers/infiniband/fabric). Without
// SNMP access the result is the leaves alone.
package lldp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"path"
	"strings"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/infiniband/fabric"
	"github.com/toposcope/toposcope/providers/lldp/neighbor"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "lldp"

// AttrTiers is the node attribute set to "leaves" on a node whose leaf
// group has no switch above it in the result: SNMP is not configured,
// or no switch above its leaves could be walked.
const AttrTiers = "lldpTiers"

// ErrMissing means requested nodes have no LLDP neighbors in a fresh
// report (with missing: error).
var ErrMissing = errors.New("nodes without LLDP neighbors in a fresh agent report")

// Provider builds the Ethernet switch tree from the agents' LLDP reports
// and, when configured, the switches' LLDP-MIB.
type Provider struct {
	cfg    Config
	log    *slog.Logger
	agents *agents.Provider
	walk   Walker
	nets   []netip.Prefix
}

// New validates cfg and returns the provider; with cfg.SNMP it reads the
// credential files now, so that a missing one fails at start.
func New(cfg Config, deps providers.Deps) (*Provider, error) {
	return NewWithWalker(cfg, deps, nil)
}

// NewWithWalker is New with the SNMP client given (nil: gosnmp with
// cfg.SNMP's credentials).
func NewWithWalker(cfg Config, deps providers.Deps, w Walker) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	deps = deps.WithDefaults()
	a, err := agents.New(cfg.Config, deps)
	if err != nil {
		return nil, err
	}
	p := &Provider{cfg: cfg, log: deps.Logger, agents: a, walk: w}
	if cfg.SNMP != nil {
		s := cfg.SNMP.withDefaults()
		p.cfg.SNMP = &s
		for _, n := range s.Networks {
			p.nets = append(p.nets, netip.MustParsePrefix(n).Masked()) // validated
		}
		if p.walk == nil {
			if p.walk, err = newSNMPWalker(s); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// Discover returns the requested nodes (or every node with a fresh
// report) under their Ethernet switch tree.
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lldp: %w", err)
	}
	fresh, _, err := p.agents.Fresh(ctx)
	if err != nil {
		return nil, fmt.Errorf("lldp: %w", err)
	}
	names := p.agents.Nodes(req, fresh)
	hosts := map[string][]neighbor.Neighbor{}
	var missing []string
	for _, n := range names {
		if r, ok := fresh[n]; ok && len(r.Facts.LLDP) > 0 {
			hosts[n] = r.Facts.LLDP
		} else {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		if p.cfg.Missing == agents.MissingError {
			return nil, fmt.Errorf("lldp: %w: %d (%s)", ErrMissing, len(missing), hostlist.Compress(missing))
		}
		p.log.Warn("lldp: nodes without LLDP neighbors in a fresh report left under no switch", "count", len(missing), "nodes", hostlist.Compress(missing))
	}
	short := make(map[string]bool, len(hosts)) // the hosts' short names
	for n := range hosts {
		short[shortName(n)] = true
	}
	var views map[string]*View
	if p.cfg.SNMP != nil {
		var warnings []string
		c := &crawler{s: *p.cfg.SNMP, walk: p.walk, nets: p.nets, log: p.log, hosts: short}
		views, warnings = c.crawl(ctx, leafTargets(hosts))
		warnings = append(warnings, verify(hosts, views)...)
		for _, w := range warnings {
			p.log.Warn("lldp: " + w)
		}
	}
	tree, err := p.reduce(hosts, short, views)
	if err != nil {
		return nil, fmt.Errorf("lldp: %w", err)
	}
	b := topology.NewBuilder()
	b.Grow(len(names))
	for _, n := range names {
		node := topology.Node{Name: n}
		var path []topology.SwitchInfo
		if tree != nil {
			path = tree.Path(n)
		}
		if len(path) == 1 {
			node.Attributes = map[string]string{AttrTiers: "leaves"}
		}
		b.AddNode(node)
		if path != nil {
			b.AddPath(n, path)
		}
	}
	g, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("lldp: build graph: %w", err)
	}
	if p.cfg.SNMP == nil {
		p.log.Info("lldp: leaves only (no snmp configured): the leaf groups are the tree's roots", "leaves", len(g.Roots()))
	}
	return g, nil
}

// reduce builds the switch tree: each leaf group (neighbor.Leaves) holds
// its hosts, and every switch-to-switch link a walked switch shows is a
// cable; excluded switches and switches with end points that are not
// cluster hosts are foreign.
func (p *Provider) reduce(hosts map[string][]neighbor.Neighbor, short map[string]bool, views map[string]*View) (*fabric.Tree, error) {
	leaves := neighbor.Leaves(hosts)
	f := fabric.New()
	for host, g := range leaves {
		f.AddSwitch(g.Name, g.Name)
		f.AttachHost(g.Name, host)
	}
	ids := mainGroups(leaves)
	names := switchNames(views, ids)
	idsOf := func(chassis string) []string {
		if l := ids[chassis]; l != nil {
			return l
		}
		return []string{names[chassis]}
	}
	for _, chassis := range sortedKeys(views) {
		v := views[chassis]
		for _, r := range v.Remotes {
			switch {
			case r.Switch():
				for _, a := range idsOf(chassis) {
					for _, b := range idsOf(r.ChassisID) {
						f.Link(a, b, 0)
					}
				}
			case r.EndPoint() && ids[chassis] == nil && !short[shortName(r.SysName)]:
				f.MarkForeign(names[chassis], "end point "+r.SysName+" is not a cluster host")
			}
		}
	}
	for chassis, name := range names {
		if ids[chassis] == nil && p.cfg.SNMP != nil && excluded(p.cfg.SNMP.Exclude, name) {
			f.MarkForeign(name, "snmp.exclude")
		}
	}
	if len(leaves) == 0 {
		return nil, nil // no node to place
	}
	return f.Reduce()
}

// mainGroups maps each leaf's chassis ID to the leaf group that holds
// most hosts among those it is in (ties: the first by name). Only a
// chassis's main group is cabled to the switches above it: a group that
// is no leaf's main group (hosts whose claims mix leaves of other
// groups, and that no switch contradicted) stays a root of its own, so
// that it cannot join two parts of the tree or move any other node.
func mainGroups(leaves map[string]*neighbor.LeafGroup) map[string][]string {
	hosts := map[*neighbor.LeafGroup]int{}
	for _, g := range leaves {
		hosts[g]++
	}
	best := map[string]*neighbor.LeafGroup{}
	for g, n := range hosts {
		for _, c := range g.Chassis {
			b := best[c]
			if b == nil || n > hosts[b] || (n == hosts[b] && g.Name < b.Name) {
				best[c] = g
			}
		}
	}
	out := make(map[string][]string, len(best))
	for c, g := range best {
		out[c] = []string{g.Name}
	}
	return out
}

// NewFactory describes the lldp provider to the registry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "Ethernet (RoCE) switch tree from the agents' LLDP neighbors and, with SNMP, the switches' LLDP-MIB", exampleParams, DefaultConfig(), New)
}

// shortName is a host name's first label, lower-cased: how a node name
// and the system name its lldpd sends (often the FQDN) are compared.
func shortName(s string) string {
	s, _, _ = strings.Cut(s, ".")
	return strings.ToLower(s)
}

func excluded(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}
