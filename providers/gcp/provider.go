// Package gcp is the Google Cloud provider: it pages Compute Engine
// instances.list (per configured zone) or instances.aggregatedList (the
// whole project) with Google's Compute Engine client for Go
// (google.golang.org/api/compute/v1) and
// turns resourceStatus.physicalHostTopology {subblock, block, cluster}
// into the switch path, closest first, and the sub-block into the
// accelerator domain (as Topograph does). Instances without topology are
// unplaced and reported; a failed page fails the discovery. 429, 403
// rateLimitExceeded and 5xx are retried with capped, jittered backoff.
package gcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	compute "google.golang.org/api/compute/v1"
	"google.golang.org/api/googleapi"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/cloud"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "gcp"

// CredAccessToken is the request credential key of an OAuth2 access token.
const CredAccessToken = "accessToken"

// Sentinel errors.
var (
	// ErrRepeatedToken means the API handed out a page token already used.
	ErrRepeatedToken = cloud.ErrRepeatedToken
)

// Provider discovers topology from Compute Engine.
type Provider struct {
	cfg     Config
	log     *slog.Logger
	newAPI  func(ctx context.Context, accessToken string) (API, error)
	mapping cloud.Mapping
	obs     providers.Observer
}

// Option customizes a Provider.
type Option func(*Provider)

// WithAPI replaces the Compute client factory (tests).
func WithAPI(f func(ctx context.Context, accessToken string) (API, error)) Option {
	return func(p *Provider) { p.newAPI = f }
}

// New validates cfg and returns the provider.
func New(cfg Config, deps providers.Deps, opts ...Option) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Snapshot == nil && cfg.CredentialsFile != "" {
		if _, err := os.Stat(cfg.CredentialsFile); err != nil {
			return nil, &config.FieldError{Field: "credentialsFile", Err: fmt.Errorf("%w: %w", providers.ErrNoCredentials, err)}
		}
	}
	deps = deps.WithDefaults()
	p := &Provider{cfg: cfg, log: deps.Logger, obs: deps.Observer, mapping: cloud.Mapping{Names: cfg.Nodes, ParseID: ParseProviderID}}
	p.newAPI = func(ctx context.Context, tok string) (API, error) { return newSDK(ctx, cfg, tok, deps.Observer) }
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// ParseProviderID returns the instance name of a Kubernetes providerID
// (gce://<project>/<zone>/<name>); other input is returned unchanged.
func ParseProviderID(s string) string {
	if rest, ok := strings.CutPrefix(s, "gce://"); ok {
		return rest[strings.LastIndex(rest, "/")+1:]
	}
	return s
}

// Discover returns the graph of the requested instances (every instance
// listed with no request).
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("gcp: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Deadline)
	defer cancel()
	wanted, _ := p.mapping.Want(req)
	var found []cloud.Instance
	calls := 0
	if p.cfg.Snapshot != nil {
		for _, s := range p.cfg.Snapshot {
			found = append(found, p.instance(s.ID, s.Name, s.Zone, s.Subblock, s.Block, s.Cluster))
		}
	} else {
		tok, _ := req.Credentials.Get(CredAccessToken)
		if req.Credentials.Len() > 0 && tok == "" {
			return nil, fmt.Errorf("gcp: %w: request credentials need %q (got keys %v)", providers.ErrNoCredentials, CredAccessToken, req.Credentials.Keys())
		}
		api, err := p.newAPI(ctx, tok)
		if err != nil {
			return nil, httpretry.ScrubError(fmt.Errorf("gcp: %w: give request creds %q, params.credentialsFile, "+
				"or Application Default Credentials: %w", providers.ErrNoCredentials, CredAccessToken, err), tok)
		}
		defer func() { _ = api.Close() }()
		found, calls, err = p.fetch(ctx, api)
		if err != nil {
			return nil, httpretry.ScrubError(fmt.Errorf("gcp: project %s: %w", p.cfg.Project, err), tok)
		}
	}
	g, rep, err := p.mapping.Assemble(ctx, wanted, found)
	if err != nil {
		return nil, fmt.Errorf("gcp: %w", err)
	}
	rep.Log(p.log, Name)
	rep.Record(p.obs, Name)
	p.log.Debug("gcp discovery", "project", p.cfg.Project, "calls", calls, "instances", len(found),
		"nodes", len(g.Nodes()), "unplaced", rep.Count())
	return g, nil
}

// instance reduces an API instance to the common model.
func (p *Provider) instance(id, name, zone, subblock, block, cluster string) cloud.Instance {
	zone = zone[strings.LastIndex(zone, "/")+1:]
	in := cloud.Instance{ID: id, Name: name, Zone: zone}
	if i := strings.LastIndex(zone, "-"); i > 0 {
		in.Region = zone[:i]
	}
	for _, s := range []string{subblock, block, cluster} {
		if s != "" {
			in.Path = append(in.Path, s)
		}
	}
	if subblock == "" { // Topograph's rule: no sub-block, no placement
		in.Path = nil
	}
	if p.cfg.Domain == "subblock" && subblock != "" {
		in.Domain = subblock
	}
	return in
}

func (p *Provider) fromAPI(list []*compute.Instance, out []cloud.Instance) []cloud.Instance {
	for _, it := range list {
		if it == nil {
			continue
		}
		var t compute.ResourceStatusPhysicalHostTopology
		if it.ResourceStatus != nil && it.ResourceStatus.PhysicalHostTopology != nil {
			t = *it.ResourceStatus.PhysicalHostTopology
		}
		id := ""
		if it.Id != 0 { // 0: the answer left the ID out (a fields filter)
			id = strconv.FormatUint(it.Id, 10)
		}
		out = append(out, p.instance(id, it.Name, it.Zone, t.Subblock, t.Block, t.Cluster))
	}
	return out
}

// fetch pages every configured zone, or the aggregated list.
func (p *Provider) fetch(ctx context.Context, api API) ([]cloud.Instance, int, error) {
	var out []cloud.Instance
	calls := 0
	scopes := p.cfg.Zones
	if len(scopes) == 0 {
		scopes = []string{""}
	}
	for _, zone := range scopes {
		n, err := cloud.Pages(func(page int, tok string) (string, error) {
			var list []*compute.Instance
			var next string
			var err error
			if zone == "" {
				list, next, err = api.AggregatedPage(ctx, p.cfg.PageSize, tok)
			} else {
				list, next, err = api.ListPage(ctx, zone, p.cfg.PageSize, tok)
			}
			if err != nil {
				return "", fmt.Errorf("page %d: %w", page, classify(err))
			}
			out = p.fromAPI(list, out)
			return next, nil
		})
		calls += n
		if err != nil {
			return nil, calls, fmt.Errorf("%s %w", scopeName(zone), err)
		}
	}
	return out, calls, nil
}

func scopeName(zone string) string {
	if zone == "" {
		return "aggregatedList"
	}
	return "zone " + zone
}

// classify reads the SDK error and wraps it with the shared sentinels
// (providers.Classify).
func classify(err error) error {
	var ge *googleapi.Error
	switch {
	case errors.As(err, &ge) && (isThrottle(ge) || ge.Code >= 500):
		return providers.Classify(err, providers.Retryable)
	case errors.As(err, &ge) && (ge.Code == 401 || ge.Code == 403):
		return fmt.Errorf("compute engine: %w", providers.Classify(err, providers.AuthRefused))
	case errors.As(err, &ge):
		return providers.Classify(err, providers.Definite)
	}
	return providers.Classify(err, providers.NoAnswer)
}

// NewFactory describes the gcp provider to the registry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "Compute Engine physicalHostTopology: sub-block, block and cluster as tiers; sub-block as NVLink domain", exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return New(c, d) })
}
