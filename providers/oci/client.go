package oci

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/common/auth"
	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/identity"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
)

// Host is one compute host as the provider uses it.
type Host struct {
	ID, InstanceID, AvailabilityDomain string
	// HPCIsland, NetworkBlock and LocalBlock are the fabric tiers, root
	// first in the API; GPUMemoryFabric the NVLink domain.
	HPCIsland, NetworkBlock, LocalBlock, GPUMemoryFabric string
	Shape, DisplayName                                   string
}

// API is the part of the OCI SDK the provider uses.
type API interface {
	// Tenancy returns the tenancy OCID of the credentials.
	Tenancy() (string, error)
	// AvailabilityDomains lists the tenancy's availability domain names.
	AvailabilityDomains(ctx context.Context, tenancy string) ([]string, error)
	// HostsPage returns one page of an availability domain's compute
	// hosts and the next page token ("" at the end).
	HostsPage(ctx context.Context, tenancy, ad string, limit int, page string) ([]Host, string, error)
	// Rack returns a host's rack (additionalData.locationDetails.rack);
	// "" when not given.
	Rack(ctx context.Context, hostID string) (string, error)
}

// Credentials are request credentials for the raw configuration provider.
type Credentials struct {
	Tenancy, User, Fingerprint, PrivateKey, Passphrase string
}

// sdkAPI is API on the Identity and Compute clients.
type sdkAPI struct {
	cp       common.ConfigurationProvider
	compute  core.ComputeClient
	identity identity.IdentityClient
}

// newSDK builds the clients of one discovery: the credentials (request
// credentials, a config file, instance principal, or the SDK's default
// chain), the region and endpoint overrides, and the configured retry
// policy on the HTTP client in place of the SDK's retries and circuit
// breaker.
func newSDK(cfg Config, creds *Credentials, log *slog.Logger, obs providers.Observer) (*sdkAPI, error) {
	var cp common.ConfigurationProvider
	var err error
	switch {
	case creds != nil:
		var pass *string
		if creds.Passphrase != "" {
			pass = common.String(creds.Passphrase)
		}
		cp = common.NewRawConfigurationProvider(creds.Tenancy, creds.User, cfg.Region, creds.Fingerprint, creds.PrivateKey, pass)
	case cfg.InstancePrincipal:
		cp, err = auth.InstancePrincipalConfigurationProvider()
	case cfg.ConfigFile != "":
		profile := cfg.Profile
		if profile == "" {
			profile = "DEFAULT"
		}
		cp, err = common.ConfigurationProviderFromFileWithProfile(cfg.ConfigFile, profile, "")
	default:
		cp = common.DefaultConfigProvider()
	}
	if err != nil {
		return nil, err
	}
	if ok, err := common.IsConfigurationProviderValid(cp); !ok {
		return nil, err
	}
	s := &sdkAPI{cp: cp}
	if s.compute, err = core.NewComputeClientWithConfigurationProvider(cp); err != nil {
		return nil, err
	}
	if s.identity, err = identity.NewIdentityClientWithConfigurationProvider(cp); err != nil {
		return nil, err
	}
	noRetry := common.NoRetryPolicy()
	hc, err := httpretry.NewHTTPClient(httpretry.TLSOptions{}, 0, log)
	if err != nil {
		return nil, err
	}
	doer := httpretry.New(providers.ObservedClient(hc, Name, obs), cfg.Retry, httpretry.WithLogger(log))
	for _, b := range []*common.BaseClient{&s.compute.BaseClient, &s.identity.BaseClient} {
		b.Configuration = common.CustomClientConfiguration{RetryPolicy: &noRetry}
		b.HTTPClient = doer
	}
	if cfg.Region != "" {
		s.compute.SetRegion(cfg.Region)
		s.identity.SetRegion(cfg.Region)
	}
	if cfg.Endpoint != "" {
		s.compute.Host = strings.TrimSuffix(cfg.Endpoint, "/")
		s.identity.Host = strings.TrimSuffix(cfg.Endpoint, "/")
	}
	return s, nil
}

func (s *sdkAPI) Tenancy() (string, error) { return s.cp.TenancyOCID() }

func (s *sdkAPI) AvailabilityDomains(ctx context.Context, tenancy string) ([]string, error) {
	resp, err := s.identity.ListAvailabilityDomains(ctx, identity.ListAvailabilityDomainsRequest{CompartmentId: &tenancy})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(resp.Items))
	for _, ad := range resp.Items {
		if ad.Name != nil {
			out = append(out, *ad.Name)
		}
	}
	return out, nil
}

func (s *sdkAPI) HostsPage(ctx context.Context, tenancy, ad string, limit int, page string) ([]Host, string, error) {
	req := core.ListComputeHostsRequest{CompartmentId: &tenancy, AvailabilityDomain: &ad, Limit: &limit}
	if page != "" {
		req.Page = &page
	}
	resp, err := s.compute.ListComputeHosts(ctx, req)
	if err != nil {
		return nil, "", err
	}
	out := make([]Host, 0, len(resp.Items))
	for _, h := range resp.Items {
		out = append(out, Host{ID: str(h.Id), InstanceID: str(h.InstanceId), AvailabilityDomain: str(h.AvailabilityDomain),
			HPCIsland: str(h.HpcIslandId), NetworkBlock: str(h.NetworkBlockId), LocalBlock: str(h.LocalBlockId),
			GPUMemoryFabric: str(h.GpuMemoryFabricId), Shape: str(h.Shape), DisplayName: str(h.DisplayName)})
	}
	return out, str(resp.OpcNextPage), nil
}

func (s *sdkAPI) Rack(ctx context.Context, hostID string) (string, error) {
	resp, err := s.compute.GetComputeHost(ctx, core.GetComputeHostRequest{ComputeHostId: &hostID})
	if err != nil {
		return "", err
	}
	loc, _ := resp.AdditionalData["locationDetails"].(map[string]any)
	switch r := loc["rack"].(type) {
	case string:
		return r, nil
	case nil:
		return "", nil
	default:
		return fmt.Sprint(r), nil
	}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// statusOf returns the HTTP status of an SDK error (0 if none).
func statusOf(err error) int {
	if se, ok := common.IsServiceError(err); ok {
		return se.GetHTTPStatusCode()
	}
	return 0
}

// throttled reports whether status is 429 or 5xx.
func throttled(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}
