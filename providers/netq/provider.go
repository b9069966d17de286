// Package netq is the NVIDIA NetQ provider (Ethernet and Spectrum-X
// fabrics): it logs in to NetQ's REST API, selects the premises, fetches
// each premises' topology graph and reduces it to the switch tree above
// the cluster's hosts, as the infiniband provider does (package
// providers/infiniband/fabric): leaves are the switches cabled to hosts
// (tier -1 devices), redundant spines collapse.
//
// The calls are the ones NVIDIA Topograph makes: POST
// api/netq/auth/v1/login, GET api/netq/auth/v1/select/opid/{opid}, POST
// api/netq/telemetry/v1/object/topologygraph/fetch-topology?timestamp=0.
// The last is not in NetQ's public documentation and may change. TLS is
// verified unless insecureSkipVerify is set; 429 and 5xx answers are
// retried (package httpretry); credentials and tokens never appear in logs
// or errors.
package netq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/infiniband/fabric"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "netq"

// Sentinel errors.
var (
	// ErrInconsistent means NetQ's graph contradicts itself (a link to
	// an unknown node, a switch name used twice).
	ErrInconsistent = errors.New("inconsistent NetQ topology graph")
)

// Provider discovers the switch tree from NetQ.
type Provider struct {
	cfg      Config
	client   *httpretry.Client
	password string
	log      *slog.Logger
	hosts    fabric.HostSet
	obs      providers.Observer
}

// New validates cfg and returns the provider. opts configure its HTTP
// client (tests replace the sleep between retries).
func New(cfg Config, deps providers.Deps, opts ...httpretry.Option) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newProvider(cfg, deps, opts...)
}

func newProvider(cfg Config, deps providers.Deps, opts ...httpretry.Option) (*Provider, error) {
	deps = deps.WithDefaults()
	p := &Provider{cfg: cfg, log: deps.Logger, obs: deps.Observer, hosts: fabric.HostSetOf(cfg.Nodes)}
	if cfg.Snapshot != nil {
		return p, nil
	}
	pw, err := httpretry.Secret{Value: cfg.Password, File: cfg.PasswordFile}.Resolve()
	if err != nil {
		return nil, &config.FieldError{Field: "passwordFile", Err: err}
	}
	p.password = pw
	basic := strings.TrimPrefix(basicAuth(cfg.Username, pw), "Basic ")
	if p.client, err = providers.HTTPClient(Name, cfg.Connection, deps, []string{pw, basic}, opts...); err != nil {
		return nil, err
	}
	return p, nil
}

// Discover fetches the graphs of the selected premises and returns the
// tree above the requested nodes (every cluster host with no request). A
// requested node NetQ does not know is kept, unplaced.
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("netq: %w", err)
	}
	sites, err := p.fetch(ctx)
	if err != nil {
		return nil, fmt.Errorf("netq: %s: %w", p.where(), err)
	}
	tree, err := p.reduce(sites)
	if err != nil {
		return nil, fmt.Errorf("netq: %s: %w", p.where(), err)
	}
	var names []string
	switch {
	case len(req.Nodes) > 0:
		for i, ref := range req.Nodes {
			if ref.Name == "" {
				return nil, fmt.Errorf("netq: requested node %d (instance ID %q) has no name; NetQ knows hosts by name", i, ref.InstanceID)
			}
			names = append(names, ref.Name)
		}
	case p.hosts.Names() != nil:
		names = p.hosts.Names()
	default:
		names = tree.Hosts()
	}
	domains, err := p.nvlinkDomains(ctx)
	if err != nil {
		return nil, fmt.Errorf("netq: %s: %w", p.where(), err)
	}
	b := topology.NewBuilder()
	for _, n := range names {
		b.AddNode(topology.Node{Name: n})
		b.AddPath(n, tree.Path(n))
		if d, ok := domains[n]; ok {
			b.AddToDomain(n, d.DomainUUID, d.LocationInfo.ChassisSerialNumber)
		}
	}
	g, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("netq: %s: build graph: %w", p.where(), err)
	}
	p.log.Debug("netq discovery", "url", p.where(), "premises", len(sites), "nodes", len(g.Nodes()),
		"switches", len(g.Switches()), "excludedSwitches", len(tree.Excluded()))
	return g, nil
}

func (p *Provider) where() string {
	if p.cfg.Snapshot != nil {
		return "snapshot"
	}
	return p.cfg.URL
}

// reduce builds the switch tree from the graphs of every site. Switch IDs
// are their names, prefixed by the premises name when several premises
// are used.
func (p *Provider) reduce(sites []site) (*fabric.Tree, error) {
	f := fabric.New()
	var errs []error
	for _, s := range sites {
		prefix := ""
		if len(sites) > 1 {
			prefix = s.name + "/"
		}
		errs = append(errs, p.addGraph(f, prefix, s))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	tree, err := f.Reduce()
	if errors.Is(err, fabric.ErrNoLeaves) {
		return nil, fmt.Errorf("%w: no host (tier -1 device) of the cluster is linked to a switch", err)
	}
	return tree, err
}

// NewFactory describes the netq provider to the registry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "Ethernet / Spectrum-X switch tree from NVIDIA NetQ's topology graph (REST)", exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return newProvider(c, d) })
}
