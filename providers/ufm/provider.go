// Package ufm is the NVIDIA UFM provider: it reads the systems and links
// of an InfiniBand fabric from UFM's REST API (GET
// /ufmRest/resources/systems and /ufmRest/resources/links, basic auth; or
// /ufmRestV3/… with a token) and reduces them to the switch tree above the
// cluster's hosts, as the infiniband provider does (see package
// providers/infiniband/fabric): leaves are the switches cabled to hosts,
// redundant spines collapse.
//
// TLS certificates are verified unless insecureSkipVerify is set; 429 and
// 5xx answers are retried with capped exponential backoff honouring
// Retry-After (package httpretry). Credentials never appear in logs or
// errors. The documented responses carry no paging, so each list is one
// request.
package ufm

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/infiniband"
	"github.com/toposcope/toposcope/providers/infiniband/fabric"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "ufm"

// ErrInconsistent means UFM's answers contradict each other (a link to a
// GUID that is no system).
var ErrInconsistent = errors.New("inconsistent UFM data")

// System is an element of GET /ufmRest/resources/systems (the fields
// toposcope reads; the full schema is larger).
type System struct {
	Name string `json:"system_name" yaml:"system_name"`
	GUID string `json:"guid" yaml:"guid"`
	IP   string `json:"ip,omitempty" yaml:"ip,omitempty"`
	// Type is "switch", "host", "gateway" or "router".
	Type string `json:"type" yaml:"type"`
}

// Link is an element of GET /ufmRest/resources/links (the fields
// toposcope reads).
type Link struct {
	SourceGUID      string `json:"source_guid" yaml:"source_guid"`
	SourcePort      string `json:"source_port,omitempty" yaml:"source_port,omitempty"`
	DestinationGUID string `json:"destination_guid" yaml:"destination_guid"`
	DestinationPort string `json:"destination_port,omitempty" yaml:"destination_port,omitempty"`
	// Width is the link width, "4x".
	Width string `json:"width,omitempty" yaml:"width,omitempty"`
	// Speed is the lane speed ("NDR"…) where UFM gives it.
	Speed string `json:"speed,omitempty" yaml:"speed,omitempty"`
}

// Provider discovers the switch tree from UFM.
type Provider struct {
	cfg    Config
	client *httpretry.Client
	auth   string // the Authorization header value; never logged
	log    *slog.Logger
	hosts  fabric.HostSet
	names  *infiniband.Naming
	obs    providers.Observer
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
	names, err := infiniband.NewNaming(cfg.NamingRules)
	if err != nil {
		return nil, err
	}
	p := &Provider{cfg: cfg, log: deps.Logger, obs: deps.Observer, hosts: fabric.HostSetOf(cfg.Nodes), names: names}
	if cfg.Snapshot != nil {
		return p, nil
	}
	var secrets []string
	switch cfg.Auth {
	case AuthToken:
		tok, err := cfg.token().Resolve()
		if err != nil {
			return nil, &config.FieldError{Field: "tokenFile", Err: err}
		}
		p.auth = "Basic " + tok
		secrets = []string{tok}
	default:
		pw, err := cfg.password().Resolve()
		if err != nil {
			return nil, &config.FieldError{Field: "passwordFile", Err: err}
		}
		cred := base64.StdEncoding.EncodeToString([]byte(cfg.Username + ":" + pw))
		p.auth = "Basic " + cred
		secrets = []string{pw, cred}
	}
	if p.client, err = providers.HTTPClient(Name, cfg.Connection, deps, secrets, opts...); err != nil {
		return nil, err
	}
	return p, nil
}

// fetch returns the systems and links, from the snapshot or the server.
func (p *Provider) fetch(ctx context.Context) (*Snapshot, error) {
	if p.cfg.Snapshot != nil {
		return p.cfg.Snapshot, nil
	}
	h := http.Header{"Authorization": {p.auth}}
	var s Snapshot
	for _, part := range []struct {
		what string
		out  any
	}{{"systems", &s.Systems}, {"links", &s.Links}} {
		url := p.cfg.Endpoint(p.cfg.prefix() + "/resources/" + part.what)
		if err := p.client.JSON(ctx, http.MethodGet, url, h, nil, part.out); err != nil {
			return nil, classify(part.what, err)
		}
	}
	return &s, nil
}

// classify names the call and wraps its error with the shared sentinels
// (providers.ClassifyHTTP).
func classify(what string, err error) error {
	return fmt.Errorf("UFM %s: %w", what, providers.ClassifyHTTP(err))
}

// Discover asks UFM for the fabric and returns the tree above the
// requested nodes (every cluster host with no request). A requested node
// UFM does not know is kept, unplaced.
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ufm: %w", err)
	}
	snap, err := p.fetch(ctx)
	if err != nil {
		return nil, fmt.Errorf("ufm: %s: %w", p.cfg.URL, err)
	}
	tree, err := p.reduce(snap)
	if err != nil {
		return nil, fmt.Errorf("ufm: %s: %w", p.where(), err)
	}
	names, err := p.wanted(req, tree)
	if err != nil {
		return nil, fmt.Errorf("ufm: %w", err)
	}
	b := topology.NewBuilder()
	for _, n := range names {
		b.AddNode(topology.Node{Name: n})
		b.AddPath(n, tree.Path(n))
	}
	g, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("ufm: %s: build graph: %w", p.where(), err)
	}
	tree.LogChosen(p.log, Name, p.where())
	p.log.Debug("ufm discovery", "url", p.where(), "systems", len(snap.Systems), "links", len(snap.Links),
		"nodes", len(g.Nodes()), "switches", len(g.Switches()), "excludedSwitches", len(tree.Excluded()))
	return g, nil
}

func (p *Provider) where() string {
	if p.cfg.Snapshot != nil {
		return "snapshot"
	}
	return p.cfg.URL
}

func (p *Provider) wanted(req providers.Request, tree *fabric.Tree) ([]string, error) {
	if len(req.Nodes) == 0 {
		if p.hosts.Names() != nil {
			return p.hosts.Names(), nil
		}
		return slices.DeleteFunc(slices.Clone(tree.Hosts()), p.names.NotCompute), nil
	}
	out := make([]string, 0, len(req.Nodes))
	for i, ref := range req.Nodes {
		if ref.Name == "" {
			return nil, fmt.Errorf("requested node %d (instance ID %q) has no name; UFM knows hosts by name", i, ref.InstanceID)
		}
		out = append(out, ref.Name)
	}
	return out, nil
}

// normGUID lower-cases a GUID and drops a 0x prefix and leading zeros'
// variations, so that "0x0002C9…" and "0002c9…" match.
func normGUID(g string) string {
	g = strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(g), "0x"), "0X"))
	if len(g) < 16 {
		g = strings.Repeat("0", 16-len(g)) + g
	}
	return g
}

// NewFactory describes the ufm provider to the registry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "InfiniBand switch tree from NVIDIA UFM's REST API (systems and links)", exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return newProvider(c, d) })
}
