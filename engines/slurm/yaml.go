package slurm

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// Names of the topologies written when Config.Topologies is empty.
const (
	// DefaultTreeTopology names the default tree topology; it is also the
	// name Slurm gives a topology.conf topology.
	DefaultTreeTopology = "default"
	// DefaultBlockTopology names the default block topology.
	DefaultBlockTopology = "block"
)

// topologies returns the configured topology.yaml entries, or the default
// ones for g: a tree named "default" when g has switches, a block topology
// named "block" when it has accelerator domains (flat "default" when it has
// neither). The first is the cluster default. With PartitionTopologies,
// one topology per Slurm partition follows.
func (e *Engine) topologies(ctx context.Context, g *topology.Graph) ([]TopologyConfig, error) {
	ts, err := e.withPartitions(ctx, g, e.baseTopologies(g))
	if err != nil {
		return nil, err
	}
	if e.cfg.PartitionTopologies == "" {
		return ts, nil
	}
	parts, err := partitionTopologies(g, e.cfg.PartitionTopologies, ts)
	if err != nil {
		return nil, err
	}
	return append(ts, parts...), nil
}

// baseTopologies are the configured or default topologies, without the
// per-partition ones; the first cluster default is among them.
func (e *Engine) baseTopologies(g *topology.Graph) []TopologyConfig {
	ts := slices.Clone(e.cfg.Topologies)
	if len(ts) == 0 {
		if len(g.Switches()) > 0 {
			ts = append(ts, TopologyConfig{Name: DefaultTreeTopology, Plugin: KindTree})
		}
		if len(g.Domains()) > 0 {
			ts = append(ts, TopologyConfig{Name: DefaultBlockTopology, Plugin: KindBlock})
		}
		if len(ts) == 0 {
			ts = append(ts, TopologyConfig{Name: DefaultTreeTopology, Plugin: KindFlat})
		}
		ts[0].ClusterDefault = true
	}
	return ts
}

// partitionTopologies returns one topology of kind per Slurm partition
// of g's nodes (attribute topology.AttrSlurmPartitions), in name order.
func partitionTopologies(g *topology.Graph, kind string, taken []TopologyConfig) ([]TopologyConfig, error) {
	members := attributePartitions(g)
	if len(members) == 0 {
		return nil, fmt.Errorf("partitionTopologies: no node carries its Slurm partitions (the %s attribute the slurm-nodes provider sets): %w",
			topology.AttrSlurmPartitions, engines.ErrInexpressible)
	}
	names := slices.Sorted(maps.Keys(members))
	out := make([]TopologyConfig, 0, len(names))
	for _, p := range names {
		if slices.ContainsFunc(taken, func(t TopologyConfig) bool { return t.Name == p }) {
			return nil, fmt.Errorf("partitionTopologies: partition %q has the name of another topology: %w", p, engines.ErrInexpressible)
		}
		if !safeUnitName(p) {
			return nil, fmt.Errorf("partitionTopologies: partition %q cannot name a topology (letters, digits, '-' and '_' only): %w", p, engines.ErrInexpressible)
		}
		out = append(out, TopologyConfig{Name: p, Plugin: kind, Nodes: hostlist.Compress(members[p])})
	}
	return out, nil
}

// nodeFilter returns the membership test of a topology's nodes hostlist;
// nil (every node) when it has none.
func nodeFilter(t TopologyConfig) (func(string) bool, error) {
	if t.Nodes == "" || t.Plugin == KindFlat {
		return nil, nil
	}
	names, err := hostlist.Expand(t.Nodes)
	if err != nil {
		return nil, fmt.Errorf("topology %q: nodes: %w", t.Name, err)
	}
	set := make(map[string]struct{}, len(names))
	for _, n := range names {
		set[n] = struct{}{}
	}
	return func(n string) bool { _, ok := set[n]; return ok }, nil
}

// renderYAML writes topology.yaml.
func (e *Engine) renderYAML(ctx context.Context, buf *bytes.Buffer, g *topology.Graph) error {
	if !e.version.AtLeast(V2505) {
		return fmt.Errorf("topology.yaml needs Slurm 25.05 or later, slurmVersion is %s: %w", e.version, engines.ErrInexpressible)
	}
	var h header
	h.add(fmt.Sprintf("topology.yaml for Slurm %s. Written by toposcope: do not edit, it is replaced when the fabric changes.", e.version))
	h.add("While this file exists, slurmctld ignores topology.conf and TopologyPlugin.")
	root := &yaml.Node{Kind: yaml.SequenceNode}
	ts, err := e.topologies(ctx, g)
	if err != nil {
		return err
	}
	for _, t := range ts {
		item, err := e.yamlTopology(g, t, &h)
		if err != nil {
			return err
		}
		root.Content = append(root.Content, item)
	}
	if e.cfg.Header {
		h.write(buf)
	}
	buf.WriteString("---\n")
	enc := yaml.NewEncoder(buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("encode topology.yaml: %w", err)
	}
	return enc.Close()
}

// yamlTopology builds one "- topology:" entry and adds its notes to h.
func (e *Engine) yamlTopology(g *topology.Graph, t TopologyConfig, h *header) (*yaml.Node, error) {
	include, err := nodeFilter(t)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("topology %q", t.Name)
	m := mapping("topology", str(t.Name), "cluster_default", boolean(t.ClusterDefault))
	switch t.Plugin {
	case KindTree:
		p := planTree(g, include, include == nil)
		if err := p.check(e.version, what); err != nil {
			return nil, err
		}
		h.add(fmt.Sprintf("%s (tree): %s.", what, plural(len(p.lines), "switch")))
		m.Content = append(m.Content, str("tree"), mapping("switches", e.yamlSwitches(p)))
	case KindBlock:
		p, err := planBlocks(g, blockOptions{version: e.version, sizes: t.BlockSizes, include: include, small: e.cfg.SmallBlocks, what: what, names: t.BlockName})
		if err != nil {
			return nil, err
		}
		e.blockHeader(h, g, p, include, what+" (block): ")
		sizes := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, s := range p.sizes {
			sizes.Content = append(sizes.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(s)})
		}
		m.Content = append(m.Content, str("block"), mapping("block_sizes", sizes, "blocks", e.yamlBlocks(p)))
	case KindFlat:
		h.add(fmt.Sprintf("%s (flat): every node.", what))
		m.Content = append(m.Content, str("flat"), boolean(true))
	default:
		return nil, fmt.Errorf("%s: unknown plugin %q", what, t.Plugin) // unreachable after Validate
	}
	return m, nil
}

func (e *Engine) yamlSwitches(p treePlan) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Content: make([]*yaml.Node, 0, len(p.lines))}
	for i := range p.lines {
		l := &p.lines[i]
		item := mapping("switch", str(l.sw.Name))
		switch {
		case len(l.nodes) > 0:
			item.Content = append(item.Content, str("nodes"), str(hostlist.Compress(l.nodes)))
		case len(l.children) > 0:
			item.Content = append(item.Content, str("children"), str(hostlist.Compress(l.children)))
		}
		e.idComment(item, l.sw.Name, l.sw.ID)
		seq.Content = append(seq.Content, item)
	}
	return seq
}

func (e *Engine) yamlBlocks(p *blockPlan) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Content: make([]*yaml.Node, 0, len(p.slots))}
	for i := range p.slots {
		s := &p.slots[i]
		item := mapping("block", str(s.name))
		if !s.padding() {
			item.Content = append(item.Content, str("nodes"), str(hostlist.Compress(s.nodes)))
			e.idComment(item, s.name, s.id)
		}
		seq.Content = append(seq.Content, item)
	}
	return seq
}

// idComment puts the provider ID above a switch or block whose name
// differs from it.
func (e *Engine) idComment(n *yaml.Node, name, id string) {
	if e.cfg.IDComments && id != "" && id != name {
		n.HeadComment = "# " + name + " = " + strconv.QuoteToASCII(id)
	}
}

// yamlCoverage reports the nodes the cluster-default topology leaves out.
func (e *Engine) yamlCoverage(g *topology.Graph) engines.Coverage {
	var def TopologyConfig
	for _, t := range e.baseTopologies(g) {
		if t.ClusterDefault {
			def = t
			break
		}
	}
	if def.Partition != "" {
		// The partitions of the last render, else the nodes' own.
		members := attributePartitions(g)
		if last := e.lastPartitions.Load(); last != nil {
			members = *last
		}
		if ts, err := resolvePartitions([]TopologyConfig{def}, members, ""); err == nil {
			def = ts[0]
		}
	}
	include, err := nodeFilter(def)
	if err != nil {
		include = func(string) bool { return false }
	}
	var cov engines.Coverage
	switch def.Plugin {
	case KindTree:
		for _, n := range g.Nodes() {
			if n.Leaf == "" || include != nil && !include(n.Name) {
				cov.Uncovered = append(cov.Uncovered, n.Name)
			}
		}
		cov.Reason = "not placed by the tree of cluster-default topology " + strconv.Quote(def.Name)
	case KindBlock:
		p, _ := planBlocks(g, blockOptions{version: e.version, sizes: def.BlockSizes, include: include, small: e.cfg.SmallBlocks, what: def.Name, names: def.BlockName})
		cov = blockCoverageReport(g, p, include, e.version)
		for _, n := range g.Nodes() {
			if include != nil && !include(n.Name) {
				cov.Uncovered = append(cov.Uncovered, n.Name)
			}
		}
		hostlist.Sort(cov.Uncovered)
		cov.Reason = "not placed by the blocks of cluster-default topology " + strconv.Quote(def.Name)
	}
	if len(cov.Uncovered) == 0 {
		return engines.Coverage{}
	}
	return cov
}

// str is a string scalar; the encoder quotes it when YAML would read it
// as another type.
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func boolean(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

// mapping builds a mapping from alternating keys and values.
func mapping(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Content: make([]*yaml.Node, 0, len(kv))}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, str(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return m
}
