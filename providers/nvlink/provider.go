// Package nvlink is the NVLink-domain provider: it reads, per node, what
// the GPUs say about their multi-node NVLink fabric — `nvidia-smi
// --query-gpu=fabric.clusterUuid,fabric.cliqueId --format=csv` or the
// Fabric section of `nvidia-smi -q` (GB200 NVL72 and the like) — or the
// nvidia.com/gpu.clique node label, and puts every node in the domain
// "<ClusterUUID>.<CliqueID>", with the rack (chassis serial number, from
// -q "Platform Info") as sub-domain where the output gives it. GPUs with
// no fabric (PCIe, HGX without multi-node NVLink, all-zero cluster UUID)
// leave their node in no domain. The provider builds no switch tree:
// merging with a fabric provider is a later step.
package nvlink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/toposcope/toposcope/internal/bounded"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "nvlink"

// ErrNoNodes means the provider was given no node names to ask.
var ErrNoNodes = errors.New("no nodes to ask: set nodes or request a node list")

// maxReported caps how many failed nodes an error lists.
const maxReported = 10

// Runner runs a command and returns its standard output.
type Runner interface {
	Run(ctx context.Context, argv []string) ([]byte, error)
}

// ExecRunner runs commands directly (no shell), each node's output capped
// at providers.MaxNodeOutputBytes; a failure never quotes what the
// command printed.
type ExecRunner struct{}

// Run executes argv.
func (ExecRunner) Run(ctx context.Context, argv []string) ([]byte, error) {
	return bounded.Run(ctx, argv, providers.MaxNodeOutputBytes)
}

// Provider reads NVLink domains.
type Provider struct {
	cfg   Config
	run   Runner
	log   *slog.Logger
	nodes []string
}

// New validates cfg and returns the provider; run executes Config.Command
// (nil means ExecRunner).
func New(cfg Config, deps providers.Deps, run Runner) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newProvider(cfg, deps, run), nil
}

func newProvider(cfg Config, deps providers.Deps, run Runner) *Provider {
	deps = deps.WithDefaults()
	if run == nil {
		run = ExecRunner{}
	}
	p := &Provider{cfg: cfg, run: run, log: deps.Logger}
	if cfg.Nodes != "" {
		p.nodes, _ = hostlist.Expand(cfg.Nodes) // validated
	}
	return p
}

// result is what one node gave; the zero result is a node the source
// knows nothing about (unplaced).
type result struct {
	host Host
	err  error
}

// Discover reads every requested node (Config.Nodes, or the nodes the
// source has, with no request) and returns them in their domains.
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("nvlink: %w", err)
	}
	names, err := p.names(req)
	if err != nil {
		return nil, fmt.Errorf("nvlink: %s: %w", p.cfg.describe(), err)
	}
	results := p.readAll(ctx, names)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("nvlink: %w", err)
	}
	b := topology.NewBuilder()
	var failed []error
	var failedNames []string
	for i, name := range names {
		r := results[i]
		if r.err != nil {
			failed = append(failed, fmt.Errorf("node %s: %w", name, r.err))
			failedNames = append(failedNames, name)
			b.AddNode(topology.Node{Name: name})
			continue
		}
		b.AddNode(topology.Node{Name: name, GPUs: r.host.GPUs})
		if r.host.HasClique {
			b.AddToDomain(name, r.host.Clique.String(), r.host.Rack)
		}
		if len(r.host.Failed) > 0 {
			p.log.Warn("nvlink: the node's NVLink fabric did not come up: it is left out of its domain", "node", name,
				"gpus", strings.Join(r.host.Failed, "; "))
		}
		if r.host.Pending > 0 {
			p.log.Warn("nvlink: some GPUs have not finished joining the fabric", "node", name, "gpus", r.host.Pending)
		}
	}
	if len(failed) > 0 {
		if p.cfg.FailedNodes == FailedNodesError {
			if len(failed) > maxReported {
				failed = append(failed[:maxReported], fmt.Errorf("and %d more nodes (%s)", len(failed)-maxReported,
					hostlist.Compress(failedNames[maxReported:])))
			}
			return nil, fmt.Errorf("nvlink: %s: %w", p.cfg.describe(), errors.Join(failed...))
		}
		p.log.Warn("nvlink: nodes left in no domain", "source", p.cfg.describe(), "count", len(failed),
			"nodes", hostlist.Compress(failedNames), "first", failed[0].Error())
	}
	g, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("nvlink: build graph: %w", err)
	}
	return g, nil
}

// names returns the nodes to ask, in order.
func (p *Provider) names(req providers.Request) ([]string, error) {
	if len(req.Nodes) > 0 {
		out := make([]string, 0, len(req.Nodes))
		for i, ref := range req.Nodes {
			if ref.Name == "" {
				return nil, fmt.Errorf("requested node %d (instance ID %q) has no name", i, ref.InstanceID)
			}
			out = append(out, ref.Name)
		}
		return out, nil
	}
	if p.nodes != nil {
		return p.nodes, nil
	}
	var out []string
	switch {
	case len(p.cfg.Outputs) > 0:
		out = sortedKeys(p.cfg.Outputs)
	case len(p.cfg.Cliques) > 0:
		out = sortedKeys(p.cfg.Cliques)
	case p.cfg.OutputDir != "":
		entries, err := os.ReadDir(p.cfg.OutputDir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				out = append(out, strings.TrimSuffix(strings.TrimSuffix(e.Name(), ".csv"), ".txt"))
			}
		}
	}
	if len(out) == 0 {
		return nil, ErrNoNodes
	}
	hostlist.Sort(out)
	return out, nil
}

// readAll reads every node, Config.Parallel at a time.
func (p *Provider) readAll(ctx context.Context, names []string) []result {
	results := make([]result, len(names))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(p.cfg.Parallel, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				results[i] = p.read(ctx, names[i])
			}
		}()
	}
	for i := range names {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	return results
}

// read gets and summarizes one node's output.
func (p *Provider) read(ctx context.Context, node string) result {
	if v, ok := p.cfg.Cliques[node]; ok {
		c, _ := ParseCliqueLabel(v) // validated
		return result{host: Host{Clique: c, HasClique: true}}
	}
	if len(p.cfg.Cliques) > 0 {
		return result{}
	}
	data, known, err := p.output(ctx, node)
	if err != nil || !known {
		return result{err: err}
	}
	gpus, err := Parse(data, p.cfg.Format)
	if err != nil {
		return result{err: err}
	}
	h, err := Summarize(gpus)
	return result{host: h, err: err}
}

// output returns a node's nvidia-smi output; known is false when the
// source has none for the node (it is then unplaced, not an error).
func (p *Provider) output(ctx context.Context, node string) ([]byte, bool, error) {
	switch {
	case len(p.cfg.Outputs) > 0:
		v, ok := p.cfg.Outputs[node]
		return []byte(v), ok, nil
	case p.cfg.OutputDir != "":
		for _, name := range []string{node, node + ".csv", node + ".txt"} {
			data, err := bounded.ReadFile(filepath.Join(p.cfg.OutputDir, filepath.Base(name)), providers.MaxNodeOutputBytes)
			if err == nil {
				return data, true, nil
			}
			if !errors.Is(err, os.ErrNotExist) {
				return nil, true, err
			}
		}
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	out, err := p.run.Run(ctx, p.cfg.command(node))
	if err != nil {
		return nil, true, fmt.Errorf("%w: %w", providers.ErrUnavailable, err)
	}
	return out, true, nil
}

// NewFactory describes the nvlink provider to the registry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "NVLink domains (GB200 NVL72 cliques) from nvidia-smi, per node, or nvidia.com/gpu.clique values", exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return newProvider(c, d, nil), nil })
}
