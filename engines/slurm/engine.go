// Package slurm is the engine that publishes a topology graph to Slurm:
// topology.conf for topology/tree or topology/block, or topology.yaml with
// several named topologies (Slurm 25.05+).
//
// The engine knows what each Slurm series accepts (Config.SlurmVersion)
// and never writes a file that slurmctld of that series would refuse: a
// graph it cannot express is an error wrapping engines.ErrInexpressible
// that names the switch or block, the rule and the version. Output is
// byte-stable: equal graphs give equal files. See docs/slurm.md.
package slurm

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/slurmrest"
	"github.com/toposcope/toposcope/topology"
)

// Name is the engine's name in configuration files and on the CLI.
const Name = "slurm"

// Compile-time checks that Engine implements the engine interfaces.
var (
	_ engines.Engine           = (*Engine)(nil)
	_ engines.Renderer         = (*Engine)(nil)
	_ engines.CoverageReporter = (*Engine)(nil)
)

// Engine renders and publishes Slurm topology files. It is safe for
// concurrent use; concurrent Publish calls are serialized.
type Engine struct {
	cfg     Config
	version Version
	deps    engines.Deps

	// rest reads the partitions from slurmrestd when configured.
	rest partitionReader
	// lastPartitions are the partitions read at the last render, for
	// Coverage.
	lastPartitions atomic.Pointer[map[string][]string]

	mu sync.Mutex
	// reconfigurePending is set when the file was written but the
	// reconfigure command failed, so the next Publish retries it even if
	// the file is unchanged.
	reconfigurePending bool
}

// New validates cfg and returns an Engine.
func New(cfg Config, deps engines.Deps) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.SlurmVersion == VersionAuto {
		if err := resolveVersion(&cfg); err != nil {
			return nil, err
		}
		if err := cfg.Validate(); err != nil { // the checks that needed the version
			return nil, err
		}
	}
	v, err := ParseVersion(cfg.SlurmVersion)
	if err != nil {
		return nil, err // unreachable: Validate parsed it
	}
	e := &Engine{cfg: cfg, version: v, deps: deps.WithDefaults()}
	if cfg.Slurmrestd != nil {
		rc, err := slurmrest.New(*cfg.Slurmrestd, e.deps.Logger)
		if err != nil {
			return nil, config.PrefixFields("slurmrestd", err)
		}
		e.rest = rc
	}
	return e, nil
}

// NewFactory returns the registry entry of the Slurm engine.
func NewFactory() engines.Factory {
	return engines.Factory{
		Name:    Name,
		Summary: "Slurm topology.conf (topology/tree, topology/block) or topology.yaml, checked against the target Slurm version",
		New: func(params *yaml.Node, prefix string, deps engines.Deps) (engines.Engine, error) {
			cfg := DefaultConfig()
			if err := config.Decode(params, &cfg, prefix); err != nil {
				return nil, err
			}
			return New(cfg, deps)
		},
		Example: "plugin: topology/tree\n",
		Params:  config.SpecOf(DefaultConfig()),
	}
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// ContentType is "application/yaml" for topology.yaml and plain text for
// topology.conf.
func (e *Engine) ContentType() string {
	if e.cfg.Plugin == PluginYAML {
		return "application/yaml"
	}
	return "text/plain; charset=utf-8"
}

// Render returns the file for g. It fails, wrapping
// engines.ErrInexpressible, when the target Slurm version cannot express
// g; nothing is then published.
func (e *Engine) Render(ctx context.Context, g *topology.Graph) ([]byte, error) {
	data, _, err := e.render(ctx, g)
	return data, err
}

// render is Render that also returns the plan of a topology/block file,
// nil for the other plugins, so that Publish need not plan it again.
func (e *Engine) render(ctx context.Context, g *topology.Graph) ([]byte, *blockPlan, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	var (
		buf  bytes.Buffer
		plan *blockPlan
		err  error
	)
	switch e.cfg.Plugin {
	case PluginTree:
		err = e.renderTree(&buf, g)
	case PluginBlock:
		plan, err = e.renderBlock(&buf, g)
	case PluginYAML:
		err = e.renderYAML(ctx, &buf, g)
	default:
		err = fmt.Errorf("slurm: unknown plugin %q", e.cfg.Plugin) // unreachable after Validate
	}
	if err != nil {
		return nil, nil, fmt.Errorf("slurm: %w", err)
	}
	return buf.Bytes(), plan, nil
}

// renderTree writes topology.conf for topology/tree.
func (e *Engine) renderTree(buf *bytes.Buffer, g *topology.Graph) error {
	p := planTree(g, nil, e.version.AtLeast(V2505))
	if err := p.addUnplaced(g, e.cfg.UnplacedSwitch, nil); err != nil {
		return err
	}
	if err := p.check(e.version, PluginTree); err != nil {
		return err
	}
	buf.Grow(64*len(p.lines) + 16*len(g.Nodes()))
	if e.cfg.Header {
		var h header
		h.add(fmt.Sprintf("topology.conf for Slurm %s, TopologyPlugin=%s. Written by toposcope: do not edit, it is replaced when the fabric changes.", e.version, PluginTree))
		h.add(fmt.Sprintf("%s, %s.", plural(len(p.lines), "switch"), plural(len(g.Nodes())-len(g.NodesWithoutSwitch()), "node")))
		if un := g.NodesWithoutSwitch(); len(un) > 0 && e.cfg.UnplacedSwitch == "" {
			h.add(fmt.Sprintf("%s under no switch left out (topology/tree never allocates them): %s", plural(len(un), "node"), shortHostlist(un)))
		} else if len(un) > 0 {
			h.add(fmt.Sprintf("%s with no place in the fabric are under switch %s, so that Slurm keeps allocating them (no locality; unplacedSwitch): %s",
				plural(len(un), "node"), e.cfg.UnplacedSwitch, shortHostlist(un)))
		}
		if len(p.dropped) > 0 {
			h.add(fmt.Sprintf("%s with no node below left out (Slurm %s refuses a switch with neither nodes nor child switches; 25.05+ accepts it): %s",
				plural(len(p.dropped), "switch"), e.version, abbreviate(p.dropped, 8)))
		}
		h.write(buf)
	}
	renderTreeConf(buf, p, e.cfg.IDComments)
	return nil
}

// blockOptions returns the planning options of the topology/block output.
func (e *Engine) blockOptions() blockOptions {
	return blockOptions{version: e.version, sizes: e.cfg.BlockSizes, small: e.cfg.SmallBlocks, what: PluginBlock, names: e.cfg.BlockName}
}

// renderBlock writes topology.conf for topology/block and returns its
// plan.
func (e *Engine) renderBlock(buf *bytes.Buffer, g *topology.Graph) (*blockPlan, error) {
	if !e.version.AtLeast(V2311) {
		return nil, fmt.Errorf("%s needs Slurm 23.11 or later, slurmVersion is %s: %w", PluginBlock, e.version, engines.ErrInexpressible)
	}
	p, err := planBlocks(g, e.blockOptions())
	if err != nil {
		return nil, err
	}
	buf.Grow(48*len(p.slots) + 16*len(g.Nodes()))
	if e.cfg.Header {
		var h header
		h.add(fmt.Sprintf("topology.conf for Slurm %s, TopologyPlugin=%s. Written by toposcope: do not edit, it is replaced when the fabric changes.", e.version, PluginBlock))
		e.blockHeader(&h, g, p, nil, "")
		h.write(buf)
	}
	renderBlockConf(buf, p, e.version, e.cfg.IDComments)
	return p, nil
}

// blockHeader describes a block plan in comment lines.
// prefix starts the first line.
func (e *Engine) blockHeader(h *header, g *topology.Graph, p *blockPlan, include func(string) bool, prefix string) {
	src := "blockSizes[0]"
	if p.baseFrom != "" {
		src = p.baseFrom
	}
	aggs := "no aggregates"
	if len(p.sizes) > 1 {
		aggs = "aggregates of " + joinInts(p.sizes[1:], ", ") + " nodes"
	}
	h.add(fmt.Sprintf("%s%s in fabric order; base block size %s (%s); %s.", prefix,
		plural(p.real, "block"), plural(p.base, "node"), src, aggs))
	if pads := len(p.slots) - p.real; pads > 0 {
		verb := "keep"
		if pads == 1 {
			verb = "keeps"
		}
		h.add(fmt.Sprintf("%s (no Nodes=) %s every aggregate inside one switch.", plural(pads, "empty padding block"), verb))
	}
	if len(p.omitted) > 0 {
		h.add(fmt.Sprintf("Aggregate sizes %s left out: they would join blocks under different switches, and Slurm %s allows no empty padding blocks (25.05+ does).",
			joinInts(p.omitted, ", "), e.version))
	}
	if p.levels23 != "" {
		h.add(fmt.Sprintf("BlockLevels=%s keeps only the levels of Slurm 23.11's default 0-4 that follow the switches.", p.levels23))
	}
	none, dropped := blockCoverage(g, p, include)
	if len(none) > 0 {
		h.add(fmt.Sprintf("%s in no accelerator domain left out (topology/block does not allocate them): %s", plural(len(none), "node"), shortHostlist(none)))
	}
	if len(p.dropped) > 0 {
		names := make([]string, len(p.dropped))
		for i, d := range p.dropped {
			names[i] = d.name
		}
		h.add(fmt.Sprintf("%s whose size Slurm %s refuses left out (smallBlocks: drop; 25.05+ accepts them): %s; their nodes: %s",
			plural(len(p.dropped), "block"), e.version, abbreviate(names, 8), shortHostlist(dropped)))
	}
}

// Coverage reports the nodes of g that the output does not place: under
// no switch (tree), in no domain or in a dropped block (block), or left
// out by the cluster-default topology (topology.yaml).
func (e *Engine) Coverage(g *topology.Graph) engines.Coverage {
	switch e.cfg.Plugin {
	case PluginBlock:
		p, _ := planBlocks(g, e.blockOptions())
		return blockCoverageReport(g, p, nil, e.version)
	case PluginYAML:
		return e.yamlCoverage(g)
	}
	if e.cfg.UnplacedSwitch != "" {
		return engines.Coverage{}
	}
	return treeCoverage(g)
}
