// Package nscale is the Nscale provider: it pages Radar's GET
// /v1/topology (limit/offset until an empty page; bearer token,
// X-Organization, X-Region) and turns network_node_path (root first) into
// the switch path, closest first, and block_id into the accelerator
// domain. Host names come from the Instance API when instanceURL is set.
// 429 and 5xx are retried with capped, jittered backoff honouring
// Retry-After (httpretry). Instances omitted or without a path are
// unplaced and reported; a failed page fails the discovery.
package nscale

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/cloud"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "nscale"

// CredToken is the request credential key of the API token.
const CredToken = "token"

// Sentinel errors.
var (
	// ErrNoCredentials means no API token was given.
	ErrNoCredentials = errors.New("no Nscale API token")
	// ErrRepeatedPage means a page repeated instances already seen.
	ErrRepeatedPage = errors.New("repeated page")
)

// Provider discovers topology from Nscale's Radar API.
type Provider struct {
	cfg     Config
	client  *httpretry.Client
	token   string
	log     *slog.Logger
	mapping cloud.Mapping
	obs     providers.Observer
}

// New validates cfg and returns the provider; opts configure its HTTP
// client.
func New(cfg Config, deps providers.Deps, opts ...httpretry.Option) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	deps = deps.WithDefaults()
	p := &Provider{cfg: cfg, log: deps.Logger, obs: deps.Observer, mapping: cloud.Mapping{Names: cfg.Nodes}}
	if cfg.Snapshot != nil {
		return p, nil
	}
	tok, err := cfg.token().Resolve()
	if err != nil {
		return nil, &config.FieldError{Field: "tokenFile", Err: err}
	}
	p.token = tok
	c, err := cfg.Client(deps.Logger, append(opts, httpretry.WithSecrets(tok), httpretry.WithTransport(func(rt http.RoundTripper) http.RoundTripper {
		return providers.ObservedTransport(rt, Name, deps.Observer)
	}))...)
	if err != nil {
		return nil, &config.FieldError{Field: "caFile", Err: err}
	}
	p.client = c
	return p, nil
}

type result struct {
	InstanceID      string   `json:"instance_id"`
	NetworkNodePath []string `json:"network_node_path"`
	BlockID         string   `json:"block_id"`
}

// Discover returns the graph of the requested instances (every instance
// with no request).
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("nscale: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Deadline)
	defer cancel()
	wanted, _ := p.mapping.Want(req)
	var found []cloud.Instance
	calls := 0
	if p.cfg.Snapshot != nil {
		for _, s := range p.cfg.Snapshot {
			found = append(found, toInstance(result(s), ""))
		}
	} else {
		tok := p.token
		if t, ok := req.Credentials.Get(CredToken); ok {
			tok = t
		}
		if tok == "" {
			return nil, fmt.Errorf("nscale: %w: give request creds %q, params.token or params.tokenFile", ErrNoCredentials, CredToken)
		}
		var err error
		found, calls, err = p.fetch(ctx, tok)
		if err != nil {
			return nil, httpretry.ScrubError(fmt.Errorf("nscale: %w", err), tok)
		}
	}
	g, rep, err := p.mapping.Assemble(ctx, wanted, found)
	if err != nil {
		return nil, fmt.Errorf("nscale: %w", err)
	}
	rep.Log(p.log, Name)
	rep.Record(p.obs, Name)
	p.log.Debug("nscale discovery", "calls", calls, "instances", len(found), "nodes", len(g.Nodes()), "unplaced", rep.Count())
	return g, nil
}

func toInstance(r result, region string) cloud.Instance {
	in := cloud.Instance{ID: r.InstanceID, Region: region, Domain: r.BlockID}
	for _, s := range slices.Backward(r.NetworkNodePath) {
		if s != "" {
			in.Path = append(in.Path, s)
		}
	}
	return in
}

func (p *Provider) fetch(ctx context.Context, tok string) ([]cloud.Instance, int, error) {
	h := http.Header{"Authorization": {"Bearer " + tok}, "X-Organization": {p.cfg.Organization}, "X-Region": {p.cfg.Region}}
	hostnames := map[string]string{}
	calls := 0
	if p.cfg.InstanceURL != "" {
		calls++
		var list []struct {
			Metadata struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"metadata"`
		}
		q := url.Values{"organizationID": {p.cfg.Organization}, "regionID": {p.cfg.Region}}
		u := strings.TrimSuffix(p.cfg.InstanceURL, "/") + "/v2/instances?" + q.Encode()
		if err := p.client.JSON(ctx, http.MethodGet, u, http.Header{"Authorization": h["Authorization"]}, nil, &list); err != nil {
			return nil, calls, fmt.Errorf("instances: %w", classify(err))
		}
		for _, it := range list {
			hostnames[it.Metadata.ID] = it.Metadata.Name
		}
	}
	var out []cloud.Instance
	seen := map[string]bool{}
	for offset := 0; calls <= maxPages; offset += p.cfg.PageSize {
		calls++
		var pg struct {
			Results []result `json:"results"`
		}
		q := url.Values{"limit": {strconv.Itoa(p.cfg.PageSize)}, "offset": {strconv.Itoa(offset)}}
		if err := p.client.JSON(ctx, http.MethodGet, p.cfg.Endpoint("v1/topology")+"?"+q.Encode(), h, nil, &pg); err != nil {
			return nil, calls, fmt.Errorf("topology offset %d: %w", offset, classify(err))
		}
		if len(pg.Results) == 0 {
			return out, calls, nil
		}
		for _, r := range pg.Results {
			if seen[r.InstanceID] {
				return nil, calls, fmt.Errorf("topology offset %d: instance %s again: %w", offset, r.InstanceID, ErrRepeatedPage)
			}
			seen[r.InstanceID] = true
			in := toInstance(r, p.cfg.Region)
			in.Name = hostnames[r.InstanceID]
			out = append(out, in)
		}
	}
	return nil, calls, fmt.Errorf("more than %d pages", maxPages)
}

// classify marks retryable failures as providers.ErrUnavailable.
func classify(err error) error {
	var se *httpretry.StatusError
	if (errors.As(err, &se) && !se.Retryable()) || errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: %w", providers.ErrUnavailable, err)
}

// NewFactory describes the nscale provider to the registry.
func NewFactory() providers.Factory {
	return providers.Factory{
		Name:    Name,
		Summary: "Nscale Radar topology API: network node path as tiers, block as NVLink domain",
		New: func(params *yaml.Node, prefix string, deps providers.Deps) (providers.Provider, error) {
			return providers.Decoded(params, prefix, deps, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return New(c, d) })
		},
		Example: `snapshot:
  - {instance_id: node001, network_node_path: [core-1, spine-1, leaf-1], block_id: nvl-1}
  - {instance_id: node002, network_node_path: [core-1, spine-1, leaf-1], block_id: nvl-1}
  - {instance_id: node003, network_node_path: [core-1, spine-1, leaf-2]}
`,
	}
}
