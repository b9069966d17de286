// Package oci is the Oracle Cloud provider: it lists the tenancy's
// availability domains (Identity ListAvailabilityDomains), pages every
// domain's compute hosts (Core ListComputeHosts) with the oci-go-sdk, and
// turns each occupied host's local block, network block and HPC island
// into the switch path, closest first, and its GPU memory fabric
// (GB200/GB300 NVLink) into the accelerator domain, with the host's rack
// (GetComputeHost) as the sub-domain. A host missing any of the three
// tiers is unplaced, as Topograph does; a failed page fails the
// discovery. 429 and 5xx are retried with capped, jittered backoff.
package oci

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/cloud"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "oci"

// Request credential keys (API signing key of a user).
const (
	CredTenancy     = "tenancy"
	CredUser        = "user"
	CredFingerprint = "fingerprint"
	CredPrivateKey  = "privateKey"
	CredPassphrase  = "passphrase"
)

// Sentinel errors.
var (
	// ErrRepeatedToken means the API handed out a page token already used.
	ErrRepeatedToken = cloud.ErrRepeatedToken
)

// Provider discovers topology from OCI compute hosts.
type Provider struct {
	cfg     Config
	log     *slog.Logger
	newAPI  func(creds *Credentials) (API, error)
	mapping cloud.Mapping
	obs     providers.Observer
}

// Option customizes a Provider.
type Option func(*Provider)

// WithAPI replaces the SDK client factory (tests).
func WithAPI(f func(creds *Credentials) (API, error)) Option {
	return func(p *Provider) { p.newAPI = f }
}

// New validates cfg and returns the provider.
func New(cfg Config, deps providers.Deps, opts ...Option) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Snapshot == nil && cfg.ConfigFile != "" {
		if _, err := os.Stat(cfg.ConfigFile); err != nil {
			return nil, &config.FieldError{Field: "configFile", Err: fmt.Errorf("%w: %w", providers.ErrNoCredentials, err)}
		}
	}
	deps = deps.WithDefaults()
	p := &Provider{cfg: cfg, log: deps.Logger, obs: deps.Observer, mapping: cloud.Mapping{Names: cfg.Nodes}}
	p.newAPI = func(creds *Credentials) (API, error) { return newSDK(cfg, creds, deps.Logger, deps.Observer) }
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// requestCreds returns the request's API key, nil when it has none.
func (p *Provider) requestCreds(req providers.Request) (*Credentials, []string, error) {
	if req.Credentials.Len() == 0 {
		return nil, nil, nil
	}
	get := func(k string) string { v, _ := req.Credentials.Get(k); return v }
	c := &Credentials{Tenancy: get(CredTenancy), User: get(CredUser), Fingerprint: get(CredFingerprint),
		PrivateKey: get(CredPrivateKey), Passphrase: get(CredPassphrase)}
	secrets := []string{c.PrivateKey, c.Passphrase}
	if c.Tenancy == "" || c.User == "" || c.Fingerprint == "" || c.PrivateKey == "" {
		return nil, secrets, fmt.Errorf("%w: request credentials need %q, %q, %q and %q (got keys %v)", providers.ErrNoCredentials,
			CredTenancy, CredUser, CredFingerprint, CredPrivateKey, req.Credentials.Keys())
	}
	if p.cfg.Region == "" {
		return nil, secrets, &config.FieldError{Field: "region", Err: errors.New("is required with request credentials")}
	}
	return c, secrets, nil
}

// Discover returns the graph of the requested instances (every occupied
// host's instance with no request).
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("oci: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Deadline)
	defer cancel()
	wanted, _ := p.mapping.Want(req)
	var found []cloud.Instance
	calls := 0
	if p.cfg.Snapshot != nil {
		for _, s := range p.cfg.Snapshot {
			h := Host{InstanceID: s.InstanceID, AvailabilityDomain: s.AvailabilityDomain, HPCIsland: s.HPCIsland,
				NetworkBlock: s.NetworkBlock, LocalBlock: s.LocalBlock, GPUMemoryFabric: s.GPUMemoryFabric}
			in := p.instance(h, s.Rack)
			in.Name = s.Name
			found = append(found, in)
		}
	} else {
		creds, secrets, err := p.requestCreds(req)
		if err != nil {
			return nil, httpretry.ScrubError(fmt.Errorf("oci: %w", err), secrets...)
		}
		api, err := p.newAPI(creds)
		if err != nil {
			return nil, httpretry.ScrubError(fmt.Errorf("oci: %w: give request creds, params.configFile, params.instancePrincipal, "+
				"or the SDK's default configuration (~/.oci/config, OCI_* environment): %w", providers.ErrNoCredentials, err), secrets...)
		}
		found, calls, err = p.fetch(ctx, api, wanted)
		if err != nil {
			return nil, httpretry.ScrubError(fmt.Errorf("oci: %w", err), secrets...)
		}
	}
	g, rep, err := p.mapping.Assemble(ctx, wanted, found)
	if err != nil {
		return nil, fmt.Errorf("oci: %w", err)
	}
	rep.Log(p.log, Name)
	rep.Record(p.obs, Name)
	p.log.Debug("oci discovery", "region", p.cfg.Region, "calls", calls, "instances", len(found),
		"nodes", len(g.Nodes()), "unplaced", rep.Count())
	return g, nil
}

// instance reduces a host to the common model.
func (p *Provider) instance(h Host, rack string) cloud.Instance {
	in := cloud.Instance{ID: h.InstanceID, Region: p.cfg.Region, Zone: h.AvailabilityDomain}
	if h.LocalBlock != "" && h.NetworkBlock != "" && h.HPCIsland != "" { // Topograph's rule: all three or none
		in.Path = []string{h.LocalBlock, h.NetworkBlock, h.HPCIsland}
	}
	if p.cfg.Domain == DomainFabric && h.GPUMemoryFabric != "" {
		in.Domain, in.SubDomain = h.GPUMemoryFabric, rack
	}
	if h.Shape != "" {
		in.Attributes = map[string]string{"shape": h.Shape}
	}
	return in
}

// fetch pages every availability domain and reads the racks of the
// wanted fabric hosts.
func (p *Provider) fetch(ctx context.Context, api API, wanted []cloud.Wanted) ([]cloud.Instance, int, error) {
	calls := 0
	tenancy := p.cfg.Tenancy
	if tenancy == "" {
		t, err := api.Tenancy()
		if err != nil {
			return nil, 0, fmt.Errorf("%w: no tenancy: set params.tenancy: %w", providers.ErrNoCredentials, err)
		}
		if t == "" {
			return nil, 0, fmt.Errorf("%w: no tenancy: set params.tenancy", providers.ErrNoCredentials)
		}
		tenancy = t
	}
	ads := p.cfg.AvailabilityDomains
	if len(ads) == 0 {
		calls++
		var err error
		if ads, err = api.AvailabilityDomains(ctx, tenancy); err != nil {
			return nil, calls, fmt.Errorf("list availability domains: %w", classify(err))
		}
	}
	want := map[string]bool{}
	for _, w := range wanted {
		want[w.InstanceID] = true
	}
	var hosts []Host
	for _, ad := range ads {
		n, err := cloud.Pages(func(page int, tok string) (string, error) {
			list, next, err := api.HostsPage(ctx, tenancy, ad, p.cfg.PageSize, tok)
			if err != nil {
				return "", fmt.Errorf("page %d: %w", page, classify(err))
			}
			for _, h := range list {
				if h.InstanceID != "" { // else an unoccupied host
					hosts = append(hosts, h)
				}
			}
			return next, nil
		})
		calls += n
		if err != nil {
			return nil, calls, fmt.Errorf("%s: list compute hosts %w", ad, err)
		}
	}
	racks := make([]string, len(hosts))
	var need []int
	for i, h := range hosts {
		if p.cfg.racks() && p.cfg.Domain == DomainFabric && h.GPUMemoryFabric != "" && (len(wanted) == 0 || want[h.InstanceID]) {
			need = append(need, i)
		}
	}
	calls += len(need)
	if err := p.readRacks(ctx, api, hosts, need, racks); err != nil {
		return nil, calls, err
	}
	out := make([]cloud.Instance, len(hosts))
	for i, h := range hosts {
		out[i] = p.instance(h, racks[i])
	}
	return out, calls, nil
}

// readRacks fills racks[i] for every i in need with at most
// RackConcurrency GetComputeHost calls in flight; the first error stops
// the rest.
func (p *Provider) readRacks(ctx context.Context, api API, hosts []Host, need []int, racks []string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range min(p.cfg.RackConcurrency, len(need)) {
		wg.Go(func() {
			for i := range work {
				r, err := api.Rack(ctx, hosts[i].ID)
				if err != nil {
					select {
					case errs <- fmt.Errorf("get compute host %s: %w", hosts[i].ID, classify(err)):
					default:
					}
					cancel()
					continue
				}
				racks[i] = r
			}
		})
	}
feed:
	for _, i := range need {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// classify reads the SDK error and wraps it with the shared sentinels
// (providers.Classify).
func classify(err error) error {
	switch s := statusOf(err); {
	case s == 401 || s == 404:
		return fmt.Errorf("OCI: %w", providers.Classify(err, providers.AuthRefused))
	case throttled(s):
		return providers.Classify(err, providers.Retryable)
	case s != 0:
		return providers.Classify(err, providers.Definite)
	}
	return providers.Classify(err, providers.NoAnswer)
}

// NewFactory describes the oci provider to the registry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "OCI compute hosts: local block, network block and HPC island as tiers; GPU memory fabric as NVLink domain, racks as sub-domains", exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return New(c, d) })
}
