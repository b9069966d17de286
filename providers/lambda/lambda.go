// Package lambda is the Lambda provider: it pages GET
// /api/v1/topology/instance (workspace_id, region, page_size,
// page_token; bearer token) and turns each instance's networkPath (leaf
// first) into its switch path and nvlink.domain_id / clique_id into its
// accelerator domain and sub-domain. 429 and 5xx are retried with capped,
// jittered exponential backoff honouring Retry-After (httpretry).
// Instances the API omits or returns without a path are unplaced and
// reported; a failed page fails the discovery.
package lambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
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
const Name = "lambda"

// CredToken is the request credential key of the API token.
const CredToken = "token"

// Sentinel errors.
var (
	// ErrNoCredentials means no API token was given.
	ErrNoCredentials = errors.New("no Lambda API token")
	// ErrRepeatedToken means the API handed out a page token already used.
	ErrRepeatedToken = errors.New("repeated page token")
)

// Provider discovers topology from Lambda's API.
type Provider struct {
	cfg     Config
	client  *httpretry.Client
	token   string
	log     *slog.Logger
	mapping cloud.Mapping
	obs     providers.Observer
}

// New validates cfg and returns the provider; opts configure its HTTP
// client (tests replace the sleep between retries).
func New(cfg Config, deps providers.Deps, opts ...httpretry.Option) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	deps = deps.WithDefaults()
	p := &Provider{cfg: cfg, log: deps.Logger, obs: deps.Observer, mapping: cloud.Mapping{Names: cfg.Nodes, ParseID: ParseProviderID}}
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

// ParseProviderID returns the instance ID of a Kubernetes providerID
// (lambda://<id>); other input is returned unchanged.
func ParseProviderID(s string) string { return strings.TrimPrefix(s, "lambda://") }

type hop struct {
	ID string `json:"id"`
}

type item struct {
	ID          string `json:"id"`
	NetworkPath []hop  `json:"networkPath"`
	NVLink      *struct {
		DomainID string `json:"domain_id"`
		CliqueID string `json:"clique_id"`
	} `json:"nvlink"`
}

type page struct {
	Data      []item  `json:"data"`
	PageToken *string `json:"page_token"`
}

// Discover returns the graph of the requested instances (every instance
// of the workspace with no request).
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lambda: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Deadline)
	defer cancel()
	wanted, _ := p.mapping.Want(req)
	var found []cloud.Instance
	calls := 0
	if p.cfg.Snapshot != nil {
		for _, s := range p.cfg.Snapshot {
			found = append(found, cloud.Instance{ID: s.ID, Path: s.NetworkPath, Domain: s.DomainID, SubDomain: s.CliqueID})
		}
	} else {
		tok := p.token
		if t, ok := req.Credentials.Get(CredToken); ok {
			tok = t
		}
		if tok == "" {
			return nil, fmt.Errorf("lambda: %w: give request creds %q, params.token or params.tokenFile", ErrNoCredentials, CredToken)
		}
		var err error
		found, calls, err = p.fetch(ctx, tok)
		if err != nil {
			return nil, httpretry.ScrubError(fmt.Errorf("lambda: %w", err), tok)
		}
	}
	g, rep, err := p.mapping.Assemble(ctx, wanted, found)
	if err != nil {
		return nil, fmt.Errorf("lambda: %w", err)
	}
	rep.Log(p.log, Name)
	rep.Record(p.obs, Name)
	p.log.Debug("lambda discovery", "calls", calls, "instances", len(found), "nodes", len(g.Nodes()), "unplaced", rep.Count())
	return g, nil
}

func (p *Provider) fetch(ctx context.Context, tok string) ([]cloud.Instance, int, error) {
	h := http.Header{"Authorization": {"Bearer " + tok}}
	var out []cloud.Instance
	seen := map[string]bool{}
	next := ""
	for n := 1; n <= maxPagesPerQuery; n++ {
		q := url.Values{"workspace_id": {p.cfg.WorkspaceID}, "page_size": {strconv.Itoa(p.cfg.PageSize)}}
		if p.cfg.Region != "" {
			q.Set("region", p.cfg.Region)
		}
		if next != "" {
			q.Set("page_token", next)
		}
		var pg page
		if err := p.client.JSON(ctx, http.MethodGet, p.cfg.Endpoint("api/v1/topology/instance")+"?"+q.Encode(), h, nil, &pg); err != nil {
			return nil, n, fmt.Errorf("page %d: %w", n, classify(err))
		}
		for _, it := range pg.Data {
			in := cloud.Instance{ID: it.ID, Region: p.cfg.Region}
			for _, h := range it.NetworkPath {
				if h.ID != "" {
					in.Path = append(in.Path, h.ID)
				}
			}
			if it.NVLink != nil && it.NVLink.DomainID != "" {
				in.Domain, in.SubDomain = it.NVLink.DomainID, it.NVLink.CliqueID
			}
			out = append(out, in)
		}
		if pg.PageToken == nil || *pg.PageToken == "" {
			return out, n, nil
		}
		if seen[*pg.PageToken] {
			return nil, n, fmt.Errorf("page %d: %w", n, ErrRepeatedToken)
		}
		seen[*pg.PageToken] = true
		next = *pg.PageToken
	}
	return nil, maxPagesPerQuery, fmt.Errorf("more than %d pages", maxPagesPerQuery)
}

// classify marks retryable failures as providers.ErrUnavailable.
func classify(err error) error {
	var se *httpretry.StatusError
	if (errors.As(err, &se) && !se.Retryable()) || errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: %w", providers.ErrUnavailable, err)
}

// NewFactory describes the lambda provider to the registry.
func NewFactory() providers.Factory {
	return providers.Factory{
		Name:    Name,
		Summary: "Lambda topology API: network path as tiers, NVLink domain and clique",
		New: func(params *yaml.Node, prefix string, deps providers.Deps) (providers.Provider, error) {
			return providers.Decoded(params, prefix, deps, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return New(c, d) })
		},
		Example: `snapshot:
  - {id: inst-01, networkPath: [leaf1, spine1, core1]}
  - {id: inst-02, networkPath: [leaf1, spine1, core1]}
  - {id: inst-03, networkPath: [leaf2, spine1, core1], domainId: nvl-1, cliqueId: "7"}
`,
	}
}
