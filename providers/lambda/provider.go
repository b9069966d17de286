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
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/cloud"
)

// Name is the provider's registered name.
const Name = "lambda"

// CredToken is the request credential key of the API token.
const CredToken = "token"

// Sentinel errors.
var (
	// ErrRepeatedToken means the API handed out a page token already used.
	ErrRepeatedToken = cloud.ErrRepeatedToken
)

// Provider discovers topology from Lambda's API.
type Provider struct {
	cloud.TokenAPI
	cfg    Config
	client *httpretry.Client
}

// New validates cfg and returns the provider; opts configure its HTTP
// client (tests replace the sleep between retries).
func New(cfg Config, deps providers.Deps, opts ...httpretry.Option) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	api, client, err := cloud.NewTokenAPI(Name, CredToken, cfg.TokenSettings, ParseProviderID, cfg.snapshot(), deps, opts...)
	if err != nil {
		return nil, err
	}
	p := &Provider{TokenAPI: api, cfg: cfg, client: client}
	p.Fetch = p.fetch
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

func (p *Provider) fetch(ctx context.Context, tok string) ([]cloud.Instance, int, error) {
	h := http.Header{"Authorization": {"Bearer " + tok}}
	var out []cloud.Instance
	n, err := cloud.Pages(func(n int, next string) (string, error) {
		q := url.Values{"workspace_id": {p.cfg.WorkspaceID}, "page_size": {strconv.Itoa(p.cfg.PageSize)}}
		if p.cfg.Region != "" {
			q.Set("region", p.cfg.Region)
		}
		if next != "" {
			q.Set("page_token", next)
		}
		var pg page
		if err := p.client.JSON(ctx, http.MethodGet, p.cfg.Endpoint("api/v1/topology/instance")+"?"+q.Encode(), h, nil, &pg); err != nil {
			return "", fmt.Errorf("page %d: %w", n, providers.ClassifyHTTP(err))
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
		if pg.PageToken == nil {
			return "", nil
		}
		return *pg.PageToken, nil
	})
	if err != nil {
		return nil, n, err
	}
	return out, n, nil
}

// NewFactory describes the lambda provider to the registry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "Lambda topology API: network path as tiers, NVLink domain and clique", exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return New(c, d) })
}
