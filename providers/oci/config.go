package oci

import (
	"fmt"
	"net/url"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
)

// Defaults of Config.
const (
	DefaultPageSize = 100
	DefaultDeadline = 5 * time.Minute
	// DefaultRackConcurrency is Config.RackConcurrency's default.
	DefaultRackConcurrency = 16
	// DomainFabric makes the GPU memory fabric (GB200/GB300 NVLink) the
	// accelerator domain, its racks the sub-domains.
	DomainFabric = "gpuMemoryFabric"
	// DomainNone emits no accelerator domain.
	DomainNone = "none"
)

// Config is the oci provider's configuration.
type Config struct {
	// Region is the OCI region (us-ashburn-1); default: the region of the
	// credentials. Required with request credentials.
	Region string `yaml:"region,omitempty" request:"true"`
	// Tenancy is the tenancy (root compartment) OCID whose compute hosts
	// are listed; default: the tenancy of the credentials.
	Tenancy string `yaml:"tenancy,omitempty"`
	// AvailabilityDomains lists the availability domains to list
	// (default: every one of the tenancy, from ListAvailabilityDomains).
	AvailabilityDomains []string `yaml:"availabilityDomains,omitempty" request:"true"`
	// Endpoint overrides both the Identity and the Core endpoints
	// (private endpoint, proxy, emulator).
	Endpoint string `yaml:"endpoint,omitempty"`
	// ConfigFile and Profile select an OCI CLI configuration file
	// (default: the SDK's default chain, environment then ~/.oci/config
	// DEFAULT).
	ConfigFile string `yaml:"configFile,omitempty" path:"read"`
	Profile    string `yaml:"profile,omitempty"`
	// InstancePrincipal authenticates as the instance toposcope runs on
	// (dynamic groups).
	InstancePrincipal bool `yaml:"instancePrincipal,omitempty"`
	// PageSize is ListComputeHosts' limit, 1-1000 (default 100).
	PageSize int `yaml:"pageSize,omitempty"`
	// Racks reads each fabric host's rack (GetComputeHost
	// additionalData.locationDetails.rack) for the sub-domains: one call
	// per host in a GPU memory fabric (default true).
	Racks *bool `yaml:"racks,omitempty"`
	// RackConcurrency bounds the GetComputeHost calls in flight
	// (default 16).
	RackConcurrency int `yaml:"rackConcurrency,omitempty"`
	// Deadline bounds one discovery (default 5m).
	Deadline time.Duration `yaml:"deadline,omitempty"`
	// Retry is the policy for 429, 5xx and connection failures; the
	// SDK's own retries and circuit breaker are off.
	Retry httpretry.Policy `yaml:"retry,omitempty"`
	// Domain is DomainFabric (default) or DomainNone.
	Domain string `yaml:"domain,omitempty"`
	// Nodes maps instance OCIDs to node names (default: the OCID, which
	// is what OKE uses as the node's providerID; give names for Slurm).
	Nodes map[string]string `yaml:"nodes,omitempty" request:"true"`
	// Snapshot, when set, is used instead of calling the API.
	Snapshot []SnapshotHost `yaml:"snapshot,omitempty"`
}

// SnapshotHost is one compute host of a saved answer.
type SnapshotHost struct {
	InstanceID         string `yaml:"instanceId"`
	Name               string `yaml:"name,omitempty"`
	AvailabilityDomain string `yaml:"availabilityDomain,omitempty"`
	HPCIsland          string `yaml:"hpcIsland,omitempty"`
	NetworkBlock       string `yaml:"networkBlock,omitempty"`
	LocalBlock         string `yaml:"localBlock,omitempty"`
	GPUMemoryFabric    string `yaml:"gpuMemoryFabric,omitempty"`
	Rack               string `yaml:"rack,omitempty"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{PageSize: DefaultPageSize, Deadline: DefaultDeadline, Domain: DomainFabric, RackConcurrency: DefaultRackConcurrency}
}

// racks reports whether racks are read.
func (c Config) racks() bool { return c.Racks == nil || *c.Racks }

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	var errs []error
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || (u.Path != "" && u.Path != "/") {
			errs = append(errs, config.Errorf("endpoint", "want http(s)://host[:port] without credentials or path"))
		}
	}
	if c.InstancePrincipal && c.ConfigFile != "" {
		errs = append(errs, config.Errorf("instancePrincipal", "cannot be combined with configFile"))
	}
	if c.Profile != "" && c.ConfigFile == "" {
		errs = append(errs, config.Errorf("profile", "needs configFile"))
	}
	if c.PageSize < 1 || c.PageSize > 1000 {
		errs = append(errs, config.Errorf("pageSize", "must be between 1 and 1000, not %d", c.PageSize))
	}
	if c.RackConcurrency < 1 || c.RackConcurrency > 256 {
		errs = append(errs, config.Errorf("rackConcurrency", "must be between 1 and 256, not %d", c.RackConcurrency))
	}
	if c.Deadline <= 0 {
		errs = append(errs, config.Errorf("deadline", "must be positive"))
	}
	if c.Domain != DomainFabric && c.Domain != DomainNone {
		errs = append(errs, config.Errorf("domain", "must be %q or %q, not %q", DomainFabric, DomainNone, c.Domain))
	}
	errs = append(errs, config.PrefixFields("retry", c.Retry.Validate()))
	for i, ad := range c.AvailabilityDomains {
		if ad == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("availabilityDomains[%d]", i), "is empty"))
		}
	}
	for i, s := range c.Snapshot {
		if s.InstanceID == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("snapshot[%d].instanceId", i), "is required"))
		}
	}
	return config.Join(errs...)
}
