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
	"net/http"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/infiniband/fabric"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "netq"

// Sentinel errors.
var (
	// ErrAuth means NetQ refused the credentials or a token.
	ErrAuth = errors.New("NetQ refused the credentials")
	// ErrInconsistent means NetQ's graph contradicts itself (a link to
	// an unknown node, a switch name used twice).
	ErrInconsistent = errors.New("inconsistent NetQ topology graph")
)

// Config is the netq provider's configuration.
type Config struct {
	// Connection holds url (e.g. https://netq.example or the on-prem
	// https://netq:32708), caFile, insecureSkipVerify, allowHTTP, timeout
	// and retry.
	httpretry.Connection `yaml:",inline"`
	// Username and Password (or PasswordFile) log in.
	Username     string `yaml:"username,omitempty"`
	Password     string `yaml:"password,omitempty"`
	PasswordFile string `yaml:"passwordFile,omitempty"`
	// Premises lists the premises to use, by name or opid; empty means
	// every premises whose configuration key was viewed.
	Premises []string `yaml:"premises,omitempty"`
	// Nodes is a hostlist of the cluster's hosts; empty means every host
	// (tier -1 device) of the graph.
	Nodes string `yaml:"nodes,omitempty"`
	// Snapshot, when set, is used instead of asking NetQ: one topology
	// graph, inline (examples, tests, a saved capture).
	Snapshot *Graph `yaml:"snapshot,omitempty"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{} }

// Validate reports every invalid field as config.FieldErrors.
func (c Config) Validate() error {
	var errs []error
	if c.Snapshot == nil {
		errs = append(errs, c.Connection.Validate())
		if c.Username == "" {
			errs = append(errs, config.Errorf("username", "is required"))
		}
		errs = append(errs, httpretry.Secret{Value: c.Password, File: c.PasswordFile}.Check("password", "passwordFile", true))
	}
	for i, p := range c.Premises {
		if strings.TrimSpace(p) == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("premises[%d]", i), "is empty"))
		}
	}
	if c.Nodes != "" {
		if _, err := hostlist.Expand(c.Nodes); err != nil {
			errs = append(errs, config.Errorf("nodes", "%v", err))
		}
	}
	return errors.Join(errs...)
}

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
	p := &Provider{cfg: cfg, log: deps.Logger, obs: deps.Observer}
	if cfg.Nodes != "" {
		names, _ := hostlist.Expand(cfg.Nodes) // validated
		p.hosts = fabric.NewHostSet(names)
	}
	if cfg.Snapshot != nil {
		return p, nil
	}
	pw, err := httpretry.Secret{Value: cfg.Password, File: cfg.PasswordFile}.Resolve()
	if err != nil {
		return nil, &config.FieldError{Field: "passwordFile", Err: err}
	}
	p.password = pw
	c, err := cfg.Client(deps.Logger, append(opts, httpretry.WithSecrets(pw), httpretry.WithTransport(func(rt http.RoundTripper) http.RoundTripper {
		return providers.ObservedTransport(rt, Name, deps.Observer)
	}))...)
	if err != nil {
		return nil, &config.FieldError{Field: "caFile", Err: err}
	}
	p.client = c
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
	b := topology.NewBuilder()
	for _, n := range names {
		b.AddNode(topology.Node{Name: n})
		b.AddPath(n, tree.Path(n))
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
	return providers.Factory{
		Name:    Name,
		Summary: "Ethernet / Spectrum-X switch tree from NVIDIA NetQ's topology graph (REST)",
		New: func(params *yaml.Node, prefix string, deps providers.Deps) (providers.Provider, error) {
			cfg := DefaultConfig()
			if err := config.Decode(params, &cfg, prefix); err != nil {
				return nil, err
			}
			p, err := newProvider(cfg, deps)
			if err != nil {
				var fe *config.FieldError
				if errors.As(err, &fe) {
					c := *fe
					c.Field = prefix + "." + c.Field
					return nil, &c
				}
				return nil, err
			}
			return p, nil
		},
		Example: exampleParams,
	}
}
