// Package example is the template of a provider: copy this folder to add
// one. It discovers nothing outside itself (its fabric is written in its
// configuration), so that what is left is the shape every provider has:
//
//   - config.go: the typed Config with its defaults and its Validate, which
//     names each bad key and reports all of them at once;
//   - example.go: exampleParams, parameters that build a working provider
//     with no outside service (the conformance test, the docs);
//   - provider.go: New (validate, keep the dependencies it is given: no
//     package-level state), Discover (honour the context, cover exactly the
//     requested nodes, report the ones it cannot place as unplaced rather
//     than dropping them) and NewFactory, the registry entry;
//   - provider_test.go: a table of bad configurations and a golden file of
//     a discovery under testdata/ (go test -update rewrites it).
//
// To ship a copy, add its NewFactory to app/registry.go:
// the conformance test (app) then runs it through the
// contract every provider meets. This template is run through that test
// too, but is not in the shipped list.
package example

import (
	"context"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's name in configuration and on the command line.
const Name = "example"

// Provider discovers the fabric its configuration describes.
type Provider struct {
	cfg  Config
	deps providers.Deps
}

// New validates cfg and returns the provider.
func New(cfg Config, deps providers.Deps) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, deps: deps.WithDefaults()}, nil
}

// Discover returns the graph of the requested nodes (every configured
// node when the request names none). A requested node the configuration
// does not know is in the graph, unplaced.
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	byName := make(map[string]NodeSpec, len(p.cfg.Nodes))
	for _, n := range p.cfg.Nodes {
		byName[n.Name] = n
	}
	wanted := p.cfg.Nodes
	var strangers []string
	if len(req.Nodes) > 0 {
		wanted = make([]NodeSpec, 0, len(req.Nodes))
		for _, r := range req.Nodes {
			if n, ok := byName[r.Name]; ok {
				wanted = append(wanted, n)
			} else {
				strangers = append(strangers, r.Name)
			}
		}
	}
	b := topology.NewBuilder()
	b.Grow(len(wanted) + len(strangers))
	for _, name := range strangers {
		b.AddNode(topology.Node{Name: name}) // known to the scheduler, not to this source: unplaced
	}
	for _, n := range wanted {
		b.AddNode(topology.Node{Name: n.Name, GPUs: n.GPUs, Zone: p.cfg.Zone})
		path := make([]topology.SwitchInfo, len(n.Path))
		for i, id := range n.Path {
			path[i] = topology.SwitchInfo{ID: id}
		}
		b.AddPath(n.Name, path)
		if n.Domain != "" {
			b.AddToDomain(n.Name, n.Domain, "")
		}
	}
	g, err := b.Build()
	if err != nil {
		return nil, err
	}
	p.deps.Logger.DebugContext(ctx, Name+": discovered", "nodes", len(g.Nodes()), "unplaced", len(g.Unplaced()))
	return g, nil
}

// NewFactory is the provider's registry entry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "template: the fabric written in its configuration", exampleParams, DefaultConfig(), New)
}
