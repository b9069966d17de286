// Package nscale is the Nscale provider: it pages Radar's GET
// /v2/topology (or, with apiVersion v1, /v1/topology; limit/offset until
// an empty page; bearer token, X-Organization, X-Region) and turns each
// result's server_id (v1: instance_id) into the instance and
// network_node_path (root first) into
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
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/cloud"
)

// Name is the provider's registered name.
const Name = "nscale"

// CredToken is the request credential key of the API token.
const CredToken = "token"

// Sentinel errors.
var (
	// ErrRepeatedPage means a page repeated instances already seen.
	ErrRepeatedPage = errors.New("repeated page")
)

// Provider discovers topology from Nscale's Radar API.
type Provider struct {
	cloud.TokenAPI
	cfg    Config
	client *httpretry.Client
}

// New validates cfg and returns the provider; opts configure its HTTP
// client.
func New(cfg Config, deps providers.Deps, opts ...httpretry.Option) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	api, client, err := cloud.NewTokenAPI(Name, CredToken, cfg.TokenSettings, nil, cfg.snapshot(), deps, opts...)
	if err != nil {
		return nil, err
	}
	p := &Provider{TokenAPI: api, cfg: cfg, client: client}
	p.Fetch = p.fetch
	return p, nil
}

type result struct {
	InstanceID      string   `json:"instance_id"`
	ServerID        string   `json:"server_id"`
	NetworkNodePath []string `json:"network_node_path"`
	BlockID         string   `json:"block_id"`
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
			return nil, calls, fmt.Errorf("instances: %w", providers.ClassifyHTTP(err))
		}
		for _, it := range list {
			hostnames[it.Metadata.ID] = it.Metadata.Name
		}
	}
	var out []cloud.Instance
	seen := map[string]bool{}
	for offset := 0; calls <= cloud.MaxPages; offset += p.cfg.PageSize {
		calls++
		var pg struct {
			Results []result `json:"results"`
		}
		q := url.Values{"limit": {strconv.Itoa(p.cfg.PageSize)}, "offset": {strconv.Itoa(offset)}}
		if err := p.client.JSON(ctx, http.MethodGet, p.cfg.Endpoint(p.cfg.APIVersion+"/topology")+"?"+q.Encode(), h, nil, &pg); err != nil {
			return nil, calls, fmt.Errorf("topology offset %d: %w", offset, providers.ClassifyHTTP(err))
		}
		if len(pg.Results) == 0 {
			return out, calls, nil
		}
		for _, r := range pg.Results {
			if p.cfg.APIVersion == "v2" {
				r.InstanceID = r.ServerID
			}
			if r.InstanceID == "" {
				return nil, calls, fmt.Errorf("topology offset %d: a result without %s", offset, map[string]string{"v1": "instance_id", "v2": "server_id"}[p.cfg.APIVersion])
			}
			if seen[r.InstanceID] {
				return nil, calls, fmt.Errorf("topology offset %d: instance %s again: %w", offset, r.InstanceID, ErrRepeatedPage)
			}
			seen[r.InstanceID] = true
			in := toInstance(r, p.cfg.Region)
			in.Name = hostnames[r.InstanceID]
			out = append(out, in)
		}
	}
	return nil, calls, fmt.Errorf("more than %d pages", cloud.MaxPages)
}

// NewFactory describes the nscale provider to the registry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "Nscale Radar topology API: network node path as tiers, block as NVLink domain", exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return New(c, d) })
}
