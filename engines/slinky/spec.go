package slinky

import (
	"context"
	"fmt"
	"strings"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/slurm"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// AnnotationSpec is the node annotation slurm-operator copies to the
// NodeSet pod and then into slurmctld as the node's dynamic topology.
const AnnotationSpec = "topology.slinky.slurm.net/spec"

// topologies returns the topologies the rendered file defines, in the
// slurm engine's order: the configured topology.yaml entries, or its
// defaults (a tree named "default" when g has switches, a block topology
// named "block" when it has domains); a topology.conf file is one
// topology named "default".
func (c *Config) topologies(g *topology.Graph) []slurm.TopologyConfig {
	switch c.Slurm.Plugin {
	case slurm.PluginTree:
		return []slurm.TopologyConfig{{Name: slurm.DefaultTreeTopology, Plugin: slurm.KindTree, ClusterDefault: true}}
	case slurm.PluginBlock:
		return []slurm.TopologyConfig{{Name: slurm.DefaultTreeTopology, Plugin: slurm.KindBlock, ClusterDefault: true}}
	}
	if len(c.Slurm.Topologies) > 0 {
		return c.Slurm.Topologies
	}
	var ts []slurm.TopologyConfig
	if len(g.Switches()) > 0 {
		ts = append(ts, slurm.TopologyConfig{Name: slurm.DefaultTreeTopology, Plugin: slurm.KindTree})
	}
	if len(g.Domains()) > 0 {
		ts = append(ts, slurm.TopologyConfig{Name: slurm.DefaultBlockTopology, Plugin: slurm.KindBlock})
	}
	return ts
}

// nodeSpecs returns, for every graph node that some topology places, its
// Slurm dynamic topology string, e.g. "default:core:spine1:leaf02,block:nvl02":
// per topology "<name>:<unit>", the unit of a tree being the switch path
// root first and that of a block the block name. Flat topologies place no
// unit. A name holding ':' or ',' (which Slurm splits on) is an error
// wrapping engines.ErrInexpressible.
func (e *Engine) nodeSpecs(ctx context.Context, g *topology.Graph) (map[string]string, error) {
	ts, err := e.slurm.ResolvePartitions(ctx, g, e.cfg.topologies(g))
	if err != nil {
		return nil, err
	}
	return specsOf(g, ts)
}

// specsOf is nodeSpecs for the topologies ts, their partitions resolved.
func specsOf(g *topology.Graph, ts []slurm.TopologyConfig) (map[string]string, error) {
	parts := make(map[string][]string, len(g.Nodes()))
	for _, t := range ts {
		if err := checkUnit(t.Name, "topology"); err != nil {
			return nil, err
		}
		include, err := membership(t)
		if err != nil {
			return nil, err
		}
		for i := range g.Nodes() {
			n := &g.Nodes()[i]
			if include != nil && !include[n.Name] {
				continue
			}
			unit, err := nodeUnit(g, n, t.Plugin)
			if err != nil {
				return nil, err
			}
			if unit != "" {
				parts[n.Name] = append(parts[n.Name], t.Name+":"+unit)
			}
		}
	}
	out := make(map[string]string, len(parts))
	for name, p := range parts {
		out[name] = strings.Join(p, ",")
	}
	return out, nil
}

// membership is the node set of a topology's nodes hostlist; nil for all.
func membership(t slurm.TopologyConfig) (map[string]bool, error) {
	if t.Nodes == "" {
		return nil, nil
	}
	names, err := hostlist.Expand(t.Nodes)
	if err != nil {
		return nil, fmt.Errorf("topology %q: nodes: %w", t.Name, err)
	}
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set, nil
}

// nodeUnit is the unit of n in a topology of the given kind; "" when the
// topology does not place n.
func nodeUnit(g *topology.Graph, n *topology.Node, kind string) (string, error) {
	switch kind {
	case slurm.KindTree:
		path := g.Path(n.Name)
		if len(path) == 0 {
			return "", nil
		}
		names := make([]string, len(path))
		for i, s := range path {
			if err := checkUnit(s.Name, "switch"); err != nil {
				return "", err
			}
			names[len(path)-1-i] = s.Name
		}
		return strings.Join(names, ":"), nil
	case slurm.KindBlock:
		if n.Domain == "" {
			return "", nil
		}
		d, _ := g.Domain(n.Domain)
		if err := checkUnit(d.Name, "block"); err != nil {
			return "", err
		}
		return d.Name, nil
	}
	return "", nil
}

func checkUnit(name, what string) error {
	if name == "" || strings.ContainsAny(name, ":,") {
		return fmt.Errorf("%s name %q cannot be part of a Slurm topology string (no ':' or ','): %w", what, name, engines.ErrInexpressible)
	}
	return nil
}
