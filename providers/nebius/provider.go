// Package nebius is the Nebius provider: it pages the compute API's
// nebius.compute.v1.InstanceService/List over gRPC (parent_id = the
// project, page_size, page_token) and turns each instance's
// status.infiniband_topology_path (root first) into its switch path and
// spec.nvl_instance_group_id into its NVLink domain. Nebius's Go SDK is
// not used: a narrow client (client.go, wire.go) speaks the published
// protobuf messages through grpc-go. RESOURCE_EXHAUSTED and UNAVAILABLE
// are retried with backoff, honouring the server's RetryInfo. Instances
// the API omits or returns without a path are unplaced and reported; a
// failed page fails the discovery.
package nebius

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/cloud"
)

// Name is the provider's registered name.
const Name = "nebius"

// CredToken is the request credential key of an IAM access token.
const CredToken = "token"

// EnvToken is the environment variable read for an IAM access token when
// neither the request nor the configuration gives one.
const EnvToken = "IAM_TOKEN"

// ErrRepeatedToken means the API handed out a page token already used.
var ErrRepeatedToken = cloud.ErrRepeatedToken

// Provider discovers topology from the Nebius compute API.
type Provider struct {
	cloud.TokenAPI
	cfg      Config
	api      *grpcClient
	meta     *cloud.Client
	sa       *serviceAccount
	exchange *exchanger
	getenv   func(string) string
}

// Option customizes a Provider.
type Option func(*Provider)

// WithGetenv replaces os.Getenv for IAM_TOKEN.
func WithGetenv(f func(string) string) Option { return func(p *Provider) { p.getenv = f } }

// New validates cfg, reads its credentials file, and returns the
// provider.
func New(cfg Config, deps providers.Deps, opts ...Option) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	deps = deps.WithDefaults()
	api, err := cloud.TokenAPIOf(Name, CredToken, cfg.TokenSettings, nil, cfg.snapshot(), deps)
	if err != nil {
		return nil, err
	}
	p := &Provider{TokenAPI: api, cfg: cfg, getenv: os.Getenv}
	for _, o := range opts {
		o(p)
	}
	if cfg.Snapshot != nil {
		return p, nil
	}
	if cfg.CredentialsFile != "" {
		if p.sa, err = readCredentialsFile(cfg.CredentialsFile); err != nil {
			return nil, &config.FieldError{Field: "credentialsFile", Err: err}
		}
	}
	if cfg.MetadataURL != "-" {
		p.meta = cloud.NewClient(nil, cfg.MetadataURL)
	}
	if p.api, err = newClient(cfg, deps.Logger, deps.Observer); err != nil {
		return nil, fmt.Errorf("nebius: %w", err)
	}
	tc := cfg
	tc.URL = cfg.TokenURL
	tokens, err := newClient(tc, deps.Logger, deps.Observer)
	if err != nil {
		return nil, fmt.Errorf("nebius: tokenURL: %w", err)
	}
	p.exchange = &exchanger{client: tokens, now: time.Now}
	p.Fetch, p.Resolve = p.fetch, p.iamToken
	return p, nil
}

// iamToken is the IAM token of one discovery, from the first source that
// has one: the request's token, the request's service account key
// (exchanged), params.token or tokenFile, params.credentialsFile
// (exchanged), IAM_TOKEN, then the instance service account's token from
// the metadata service.
func (p *Provider) iamToken(ctx context.Context, c providers.Credentials) (string, error) {
	if t, ok := c.Get(CredToken); ok {
		return t, nil
	}
	sa, err := fromCredentials(c)
	switch {
	case err != nil:
		return "", err
	case sa != nil:
		return p.exchange.token(ctx, sa)
	case c.Len() > 0:
		return "", fmt.Errorf("%w: request credentials need %q (an IAM token) or %s, %s and %s (got keys %v)",
			providers.ErrNoCredentials, CredToken, CredServiceAccountID, CredPublicKeyID, CredPrivateKey, c.Keys())
	case p.Token != "":
		return p.Token, nil
	case p.sa != nil:
		return p.exchange.token(ctx, p.sa)
	}
	if t := p.getenv(EnvToken); t != "" {
		return t, nil
	}
	if p.meta == nil {
		return "", fmt.Errorf("%w: no token in the request, params.token, params.tokenFile, params.credentialsFile or %s", providers.ErrNoCredentials, EnvToken)
	}
	t, err := p.meta.NebiusToken(ctx)
	if err != nil {
		return "", fmt.Errorf("%w: no token in the request, params.token, params.tokenFile, params.credentialsFile or %s, and the metadata service gave none: %w",
			providers.ErrNoCredentials, EnvToken, err)
	}
	return t, nil
}

// fetch pages InstanceService/List over the project.
func (p *Provider) fetch(ctx context.Context, tok string) ([]cloud.Instance, int, error) {
	project := p.cfg.Project
	if project == "" {
		var err error
		if project, err = p.meta.NebiusProject(ctx); err != nil {
			return nil, 0, fmt.Errorf("project: not configured, and %w", err)
		}
	}
	sess, err := p.api.open()
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = sess.Close() }()
	var out []cloud.Instance
	req := &listRequest{ParentID: project, PageSize: int64(p.cfg.PageSize)}
	n, err := cloud.Pages(func(n int, pageToken string) (string, error) {
		req.PageToken = pageToken
		resp, err := sess.list(ctx, tok, req)
		if err != nil {
			return "", fmt.Errorf("page %d: %w", n, err)
		}
		for _, in := range resp.Items {
			out = append(out, fromAPI(in, p.cfg.Region))
		}
		return resp.NextPageToken, nil
	})
	if err != nil {
		return nil, n, fmt.Errorf("list %w", err)
	}
	return out, n, nil
}

// fromAPI reduces an instance to the common model: the path reversed to
// closest first, the NVLink instance group as the domain, the hostname
// (else the name) as the host name, platform and preset as attributes.
func fromAPI(in instance, region string) cloud.Instance {
	out := cloud.Instance{ID: in.ID, Name: in.Hostname, Region: region, Domain: in.NVLGroup}
	if out.Name == "" {
		out.Name = in.Name
	}
	for i := len(in.Path) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(in.Path[i]); s != "" {
			out.Path = append(out.Path, s)
		}
	}
	attrs := map[string]string{}
	for k, v := range map[string]string{"platform": in.Platform, "preset": in.Preset, "gpuCluster": in.GPUCluster} {
		if v != "" {
			attrs[k] = v
		}
	}
	if len(attrs) > 0 {
		out.Attributes = attrs
	}
	return out
}

// NewFactory describes the nebius provider to the registry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "Nebius compute API over gRPC: InfiniBand topology path as tiers, NVLink instance group as the domain",
		exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return New(c, d) })
}
