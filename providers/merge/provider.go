// Package merge is the provider that combines several providers into one
// graph: the switch tree from one source (InfiniBand, UFM, a cloud) and the
// NVLink domains from another (nvidia-smi, node labels), say. Nodes are
// reconciled by name or instance ID; conflicts (a node that two sources
// place differently) and nodes a source does not know are reported, with
// a configured policy.
//
// The package does not import the registry (which lists it): the factory
// takes a providers.Lookup that finds the providers it builds.
package merge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "merge"

// Sentinel errors.
var (
	// ErrConflict means two sources disagree about a node.
	ErrConflict = errors.New("sources disagree")
	// ErrUnknownNode means a source does not know a node (with
	// unknownNodes: error).
	ErrUnknownNode = errors.New("node unknown to a source")
)

// child is a built source.
type child struct {
	name string
	p    providers.Provider
}

// Provider merges the graphs of its sources.
type Provider struct {
	cfg      Config
	children []child
	log      *slog.Logger
	obs      providers.Observer
}

// New validates cfg and builds every source with its factory from lookup.
// Errors in a source's parameters name the key under prefix (e.g.
// "params.sources[1].params.cliques").
func New(cfg Config, lookup providers.Lookup, prefix string, deps providers.Deps) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if lookup == nil {
		return nil, errors.New("merge: no provider lookup")
	}
	deps = deps.WithDefaults()
	p := &Provider{cfg: cfg, log: deps.Logger, obs: deps.Observer}
	var errs []error
	for i, s := range cfg.Sources {
		field := join(prefix, fmt.Sprintf("sources[%d]", i))
		params, _ := paramsNode(s.Params) // validated
		name := cfg.sourceName(i)
		cd := deps
		cd.Logger = deps.Logger.With("source", name)
		c, err := lookup.Build(s.Provider, params, field+".provider", field+".params", cd)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.children = append(p.children, child{name: name, p: c})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// Discover asks every source (at once) with the same request and merges
// what they return.
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	graphs := make([]*topology.Graph, len(p.children))
	errs := make([]error, len(p.children))
	var wg sync.WaitGroup
	for i, c := range p.children {
		wg.Go(func() {
			g, err := c.p.Discover(ctx, req)
			if err != nil {
				err = fmt.Errorf("merge: source %q: %w", c.name, err)
			}
			graphs[i], errs[i] = g, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p.merge(req, graphs)
}

// NewFactory describes the merge provider to the registry; lookup finds
// the providers named in its sources (normally the registry's own
// Provider method).
func NewFactory(lookup providers.Lookup) providers.Factory {
	// Sources are built with field names relative to this provider's
	// params; Decoded puts them under prefix.
	return providers.NewFactory(Name, "combines several providers (e.g. the switch tree from infiniband and NVLink domains from nvlink or k8s-labels) into one graph",
		exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return New(c, lookup, "", d) })
}
