// Package infiniband is the InfiniBand provider: it reads the output of
// the real `ibnetdiscover` (run as a configurable command — locally, over
// ssh, or as `ibsim-run ibnetdiscover` — or saved to a file), parses the
// whole format, and reduces the fabric to a switch tree whose leaves are
// the switches that hold the cluster's hosts (see package fabric).
//
// Hosts are named from their HCAs' node descriptions ("<host> <hca>", set
// by rdma-ndd; Config.HostPattern). Config.HCAs and Config.HCAGUIDs select
// the rail to build from, so that on hosts with several fabrics (compute
// and storage rails) the other rails' switches never land in the tree.
// Truncated or garbled output, a fabric that is no tree and cluster hosts
// with no selected HCA are errors that say what and where; the provider
// never returns a silently smaller topology. docs/fabric.md has the
// details.
package infiniband

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/toposcope/toposcope/internal/bounded"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "infiniband"

// Node attributes the provider sets.
const (
	// AttrHCAs lists the node's selected HCAs, comma-separated.
	AttrHCAs = "infiniband.hcas"
)

// Provider discovers the switch tree of an InfiniBand fabric.
type Provider struct {
	cfg      Config
	run      Runner
	readFile func(string) ([]byte, error)
	log      *slog.Logger
	names    *Naming
	// report reads Config.ConfigMap; nil without one.
	report  *ReportConfigMap
	cluster map[string]bool // nil: every host
	nodes   []string        // Config.Nodes expanded, in order
}

// New validates cfg and returns the provider. run executes Config.Command
// (nil means ExecRunner); Config.Output is read with readSource.
func New(cfg Config, deps providers.Deps, run Runner) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newProvider(cfg, deps, run)
}

func newProvider(cfg Config, deps providers.Deps, run Runner) (*Provider, error) {
	deps = deps.WithDefaults()
	if run == nil {
		run = ExecRunner{}
	}
	if cfg.Output == "" && cfg.OutputText == "" && len(cfg.Command) == 0 && cfg.ConfigMap == "" {
		cfg.Command = config.Command{"ibnetdiscover"}
	}
	names, err := NewNaming(cfg.NamingRules)
	if err != nil {
		return nil, err
	}
	p := &Provider{cfg: cfg, run: run, readFile: readSource, log: deps.Logger, names: names}
	if cfg.ConfigMap != "" {
		clients, err := cfg.Kubernetes.Clients()
		if err != nil {
			return nil, config.Errorf("kubernetes", "%w", err)
		}
		ns, name, _ := strings.Cut(cfg.ConfigMap, "/") // validated
		p.report = &ReportConfigMap{Core: clients.Core, Namespace: ns, Name: name}
	}
	p.cluster, p.nodes = clusterSet(cfg.Nodes)
	return p, nil
}

// source returns the ibnetdiscover output and a name for it.
func (p *Provider) source(ctx context.Context) ([]byte, string, error) {
	switch {
	case p.cfg.OutputText != "":
		return []byte(p.cfg.OutputText), "outputText", nil
	case p.report != nil:
		data, at, err := p.report.Read(ctx)
		if err != nil {
			return nil, p.cfg.ConfigMap, err
		}
		p.log.Debug("infiniband: fabric report", "configMap", p.cfg.ConfigMap, "reportedAt", at)
		return data, "ConfigMap " + p.cfg.ConfigMap, nil
	case p.cfg.Output != "":
		data, err := p.readFile(p.cfg.Output)
		if err != nil {
			return nil, p.cfg.Output, fmt.Errorf("read ibnetdiscover output: %w", err)
		}
		return data, p.cfg.Output, nil
	}
	name := fmt.Sprintf("command %q", p.cfg.Command.String())
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	out, err := p.run.Run(ctx, p.cfg.Command)
	if err != nil {
		return nil, name, fmt.Errorf("%s: %w: %w", name, providers.ErrUnavailable, err)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return nil, name, fmt.Errorf("%s printed nothing: %w", name, providers.ErrUnavailable)
	}
	return out, name, nil
}

// Discover runs or reads ibnetdiscover output and returns the tree above
// the requested nodes (every cluster host with no request). A requested
// node the fabric does not know is kept, unplaced; a requested node whose
// HCAs are all filtered out is an error (ErrNoHCAMatch).
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("infiniband: %w", err)
	}
	data, src, err := p.source(ctx)
	if err != nil {
		return nil, fmt.Errorf("infiniband: %w", err)
	}
	topo, err := Parse(bytes.NewReader(data), src)
	if err != nil {
		return nil, fmt.Errorf("infiniband: %w", err)
	}
	if p.cfg.NodeNameMap != "" {
		m, err := p.nameMap()
		if err != nil {
			return nil, fmt.Errorf("infiniband: nodeNameMap: %w", err)
		}
		m.apply(topo)
	}
	if len(topo.Skipped) > 0 {
		p.log.Warn("infiniband: left out lines that belong to no record (before the first or after the last)",
			"source", src, "count", len(topo.Skipped), "lines", lineList(topo.Skipped))
	}
	r, reduceErr := p.reduce(topo)
	if reduceErr != nil && len(req.Nodes) == 0 && p.nodes == nil {
		return nil, fmt.Errorf("infiniband: %s: %w", src, reduceErr)
	}
	names, err := p.wanted(req, r)
	if err != nil {
		return nil, fmt.Errorf("infiniband: %w", err)
	}
	// Requested hosts whose HCAs are all filtered out explain a failed
	// reduction better than the reduction does. With no nodes asked for
	// or configured, every host seen in the fabric is a cluster host
	// unless it is notCompute: one whose HCAs the selection filters out
	// entirely is an error, never silently dropped.
	check := names
	if len(req.Nodes) == 0 && p.nodes == nil {
		check = p.computeHosts(r)
	}
	if err := p.noMatch(r, check); err != nil {
		return nil, fmt.Errorf("infiniband: %s: %w", src, err)
	}
	if reduceErr != nil {
		return nil, fmt.Errorf("infiniband: %s: %w", src, reduceErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("infiniband: %w", err)
	}
	g, err := p.graph(r, names)
	if err != nil {
		return nil, fmt.Errorf("infiniband: %s: build graph: %w", src, err)
	}
	p.log.Debug("infiniband discovery", "source", src, "nodes", len(g.Nodes()), "switches", len(g.Switches()),
		"cas", r.cas, "unnamedCAs", r.unnamed, "excludedSwitches", len(r.tree.Excluded()),
		"unreachedSwitches", len(r.tree.Unreached()), "unplaced", len(g.NodesWithoutSwitch()))
	r.tree.LogChosen(p.log, Name, src)
	if n := len(g.NodesWithoutSwitch()); n > 0 {
		p.log.Warn("infiniband: nodes under no switch", "source", src, "count", n)
	}
	return g, nil
}

// nameMap reads Config.NodeNameMap.
func (p *Provider) nameMap() (NameMap, error) {
	data, err := p.readFile(p.cfg.NodeNameMap)
	if err != nil {
		return nil, err
	}
	return ParseNameMap(data, p.cfg.NodeNameMap)
}

// lineList writes line numbers for a log line, at most 20 of them.
func lineList(lines []int) string {
	parts := make([]string, 0, min(len(lines), 21))
	for i, l := range lines {
		if i == 20 {
			parts = append(parts, fmt.Sprintf("and %d more", len(lines)-20))
			break
		}
		parts = append(parts, strconv.Itoa(l))
	}
	return strings.Join(parts, ", ")
}

// wanted returns the node names the graph covers.
func (p *Provider) wanted(req providers.Request, r *reduced) ([]string, error) {
	if len(req.Nodes) == 0 {
		if p.nodes != nil {
			return p.nodes, nil
		}
		hosts := r.tree.Hosts()
		return slices.DeleteFunc(slices.Clone(hosts), p.notCompute), nil
	}
	names := make([]string, 0, len(req.Nodes))
	for i, ref := range req.Nodes {
		if ref.Name == "" {
			return nil, fmt.Errorf("requested node %d (instance ID %q) has no name; InfiniBand knows hosts by name", i, ref.InstanceID)
		}
		names = append(names, ref.Name)
	}
	return names, nil
}

func (p *Provider) graph(r *reduced, names []string) (*topology.Graph, error) {
	b := topology.NewBuilder()
	for _, name := range names {
		n := topology.Node{Name: name}
		if hcas := r.hcas[name]; len(hcas) > 0 {
			n.Attributes = map[string]string{AttrHCAs: strings.Join(hcas, ",")}
		}
		b.AddNode(n)
		b.AddPath(name, r.tree.Path(name))
	}
	return b.Build()
}

// NewFactory describes the infiniband provider to the registry. The CLI's
// --ibnetdiscover-output FILE sets the parameter "output" and
// --ibnetdiscover-command 'CMD' sets "command".
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "InfiniBand switch tree from ibnetdiscover (a command, e.g. over ssh, or its saved output)", exampleParams(), DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return newProvider(c, d, nil) })
}

// readSource reads a saved ibnetdiscover output, capped at
// providers.MaxSourceBytes.
func readSource(path string) ([]byte, error) { return bounded.ReadFile(path, providers.MaxSourceBytes) }

// notCompute reports whether host matches a notCompute pattern.
func (p *Provider) notCompute(host string) bool { return p.names.NotCompute(host) }

// computeHosts returns every host seen in the fabric that is not
// notCompute, sorted.
func (p *Provider) computeHosts(r *reduced) []string {
	hosts := make([]string, 0, len(r.seen))
	for h := range r.seen {
		if !p.notCompute(h) {
			hosts = append(hosts, h)
		}
	}
	hostlist.Sort(hosts)
	return hosts
}
