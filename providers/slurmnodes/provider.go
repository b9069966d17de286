// Package slurmnodes is the provider for a Slurm head node: it reads the
// nodes slurmctld knows (`scontrol --json show nodes`, or `-o` on older
// releases), with each node's cloud instance ID and region from Slurm
// (InstanceId, a node feature, Comment or Extra), and asks another
// provider (a cloud, a fabric manager) for their topology, so that
// nobody lists nodes by hand. A request that names nodes is filled in
// from Slurm the same way. Each node's partitions are kept as the node
// attribute topology.AttrSlurmPartitions, for the Slurm engine's
// per-partition topologies.
//
// The package does not import the registry (which lists it): the factory
// takes a providers.Lookup that finds the provider it wraps.
package slurmnodes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/internal/bounded"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/slurmrest"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "slurm-nodes"

// ErrNoNodes means Slurm listed no node of the configured partitions.
var ErrNoNodes = errors.New("slurm lists no node")

// Provider lists Slurm's nodes and discovers them with its inner provider.
type Provider struct {
	cfg   Config
	inner providers.Provider
	rest  *slurmrest.Client // when the nodes come from slurmrestd
	log   *slog.Logger
}

// New validates cfg and builds the inner provider with its factory from
// lookup; errors in its parameters name the key under prefix.
func New(cfg Config, lookup providers.Lookup, prefix string, deps providers.Deps) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if lookup == nil {
		return nil, errors.New("slurm-nodes: no provider lookup")
	}
	deps = deps.WithDefaults()
	field := "provider"
	if prefix != "" {
		field = prefix + ".provider"
	}
	inner, err := lookup.Build(cfg.Provider.Name, &cfg.Provider.Params, field+".name", field+".params", deps)
	if err != nil {
		return nil, err
	}
	p := &Provider{cfg: cfg, inner: inner, log: deps.Logger}
	if cfg.Slurmrestd != nil {
		field := "slurmrestd"
		if prefix != "" {
			field = prefix + ".slurmrestd"
		}
		if p.rest, err = slurmrest.New(*cfg.Slurmrestd, deps.Logger); err != nil {
			return nil, config.PrefixFields(field, err)
		}
	}
	return p, nil
}

// NewFactory describes the provider to the registry; lookup finds the
// provider it wraps (normally the registry's own Provider method).
func NewFactory(lookup providers.Lookup) providers.Factory {
	return providers.NewFactory(Name, "Slurm's nodes (scontrol show nodes) with their instance IDs, discovered by another provider (a cloud, a fabric)",
		exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return New(c, lookup, "", d) })
}

// Discover lists Slurm's nodes and asks the inner provider for them: all
// nodes of the configured partitions, or the requested ones, each with
// the instance ID and region Slurm holds unless the request gave one. A
// requested node Slurm does not list is passed on as it is (the inner
// provider leaves it unplaced).
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("slurm-nodes: %w", err)
	}
	nodes, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	refs := make([]providers.NodeRef, 0, len(nodes))
	var noID []string
	byName := make(map[string]providers.NodeRef, len(nodes))
	for _, n := range nodes {
		ref := p.ref(n)
		if ref.InstanceID == "" && p.cfg.InstanceID != FromNone {
			noID = append(noID, n.Name)
		}
		byName[n.Name] = ref
		refs = append(refs, ref)
	}
	if len(req.Nodes) > 0 {
		refs = refs[:0]
		for _, r := range req.Nodes {
			if s, ok := byName[r.Name]; ok {
				r.InstanceID = orElse(r.InstanceID, s.InstanceID)
				r.Region = orElse(r.Region, s.Region)
			}
			refs = append(refs, r)
		}
	}
	if len(noID) > 0 {
		p.log.WarnContext(ctx, "slurm-nodes: nodes without an instance ID in Slurm; the provider matches them by name",
			"from", p.cfg.InstanceID, "count", len(noID), "nodes", hostlist.Compress(noID))
	}
	g, err := p.inner.Discover(ctx, providers.Request{Nodes: refs, Credentials: req.Credentials})
	if err != nil {
		return nil, fmt.Errorf("slurm-nodes: %s: %w", p.cfg.Provider.Name, err)
	}
	// The Slurm engine's per-partition topologies read the partitions.
	parts := make(map[string]map[string]string, len(nodes))
	for _, n := range nodes {
		if len(n.Partitions) > 0 {
			parts[n.Name] = map[string]string{topology.AttrSlurmPartitions: strings.Join(n.Partitions, ",")}
		}
	}
	return g.WithAttributes(parts), nil
}

// list reads Slurm's nodes and keeps those of the configured partitions.
func (p *Provider) list(ctx context.Context) ([]Node, error) {
	var out []byte
	switch {
	case p.cfg.OutputText != "":
		out = []byte(p.cfg.OutputText)
	case p.rest != nil:
		var err error
		if out, err = p.rest.Nodes(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("slurm-nodes: %w", ctx.Err())
			}
			return nil, fmt.Errorf("slurm-nodes: %s: %w: %w", p.cfg.source(), providers.ErrUnavailable, err)
		}
	default:
		rctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
		defer cancel()
		var err error
		if out, err = bounded.Run(rctx, p.cfg.Command, providers.MaxSourceBytes); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("slurm-nodes: %w", ctx.Err())
			}
			return nil, fmt.Errorf("slurm-nodes: %s: %w: %w", p.cfg.source(), providers.ErrUnavailable, err)
		}
	}
	nodes, err := Parse(out)
	if err != nil {
		return nil, fmt.Errorf("slurm-nodes: %s: %w", p.cfg.source(), err)
	}
	if len(p.cfg.Partitions) > 0 {
		nodes = slices.DeleteFunc(nodes, func(n Node) bool {
			return !slices.ContainsFunc(n.Partitions, func(part string) bool { return slices.Contains(p.cfg.Partitions, part) })
		})
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("slurm-nodes: %s: %w in partitions %v", p.cfg.source(), ErrNoNodes, p.cfg.Partitions)
	}
	return nodes, nil
}

// ref is the node reference of a Slurm node: its name, and the instance
// ID and region read where the configuration says.
func (p *Provider) ref(n Node) providers.NodeRef {
	r := providers.NodeRef{Name: n.Name, Region: p.cfg.Region}
	switch p.cfg.InstanceID {
	case FromInstanceID:
		r.InstanceID = n.InstanceID
	case FromFeature:
		r.InstanceID, _ = feature(n.Features, p.cfg.InstanceIDFeature)
	case FromComment:
		r.InstanceID = n.Comment
	case FromExtra:
		r.InstanceID = n.Extra
	case FromName:
		r.InstanceID = n.Name
	}
	if p.cfg.RegionFeature != "" {
		if v, ok := feature(n.Features, p.cfg.RegionFeature); ok {
			r.Region = v
		}
	}
	return r
}

// orElse returns a unless it is empty, else b.
func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
