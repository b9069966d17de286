package gcp

import (
	"fmt"
	"net/url"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
)

// Defaults of Config.
const (
	DefaultPageSize = 500
	DefaultDeadline = 5 * time.Minute
	DefaultFilter   = "status=RUNNING"
)

// Config is the gcp provider's configuration.
type Config struct {
	// Project is the project ID (required unless Snapshot is set).
	Project string `yaml:"project,omitempty"`
	// Zones lists zones to list (instances.list); empty lists the whole
	// project (instances.aggregatedList).
	Zones []string `yaml:"zones,omitempty" request:"true"`
	// Endpoint overrides https://compute.googleapis.com (private
	// endpoint, proxy, emulator).
	Endpoint string `yaml:"endpoint,omitempty"`
	// CredentialsFile is a service-account key file; without it (and
	// without request credentials) Application Default Credentials are
	// used.
	CredentialsFile string `yaml:"credentialsFile,omitempty" path:"read"`
	// Anonymous sends unauthenticated requests (emulators only).
	Anonymous bool `yaml:"anonymous,omitempty"`
	// Filter is the list filter (default status=RUNNING; "-" for none).
	Filter string `yaml:"filter,omitempty" request:"true"`
	// PageSize is maxResults, 1-500 (default 500).
	PageSize int `yaml:"pageSize,omitempty"`
	// Deadline bounds one discovery (default 5m).
	Deadline time.Duration `yaml:"deadline,omitempty"`
	// Retry is the policy for 429, 403 rateLimitExceeded and 5xx: capped
	// exponential backoff with jitter.
	Retry httpretry.Policy `yaml:"retry,omitempty"`
	// Domain is "subblock" (default: the sub-block is the accelerator
	// domain, as Topograph does) or "none".
	Domain string `yaml:"domain,omitempty"`
	// Nodes maps instance IDs or names to node names (default: the
	// instance name, which is the GKE node name).
	Nodes map[string]string `yaml:"nodes,omitempty" request:"true"`
	// Snapshot, when set, is used instead of calling the API.
	Snapshot []SnapshotInstance `yaml:"snapshot,omitempty"`
}

// SnapshotInstance is one instance of a saved answer.
type SnapshotInstance struct {
	ID       string `yaml:"id"`
	Name     string `yaml:"name"`
	Zone     string `yaml:"zone,omitempty"`
	Cluster  string `yaml:"cluster,omitempty"`
	Block    string `yaml:"block,omitempty"`
	Subblock string `yaml:"subblock,omitempty"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{PageSize: DefaultPageSize, Deadline: DefaultDeadline, Filter: DefaultFilter, Domain: "subblock"}
}

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	var errs []error
	if c.Snapshot == nil && c.Project == "" {
		errs = append(errs, config.Errorf("project", "is required"))
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
			errs = append(errs, config.Errorf("endpoint", "want http(s)://host[:port] without credentials"))
		}
	}
	if c.Anonymous && c.CredentialsFile != "" {
		errs = append(errs, config.Errorf("anonymous", "cannot be combined with credentialsFile"))
	}
	if c.PageSize < 1 || c.PageSize > 500 {
		errs = append(errs, config.Errorf("pageSize", "must be between 1 and 500, not %d", c.PageSize))
	}
	if c.Deadline <= 0 {
		errs = append(errs, config.Errorf("deadline", "must be positive"))
	}
	if c.Domain != "subblock" && c.Domain != "none" {
		errs = append(errs, config.Errorf("domain", "must be \"subblock\" or \"none\", not %q", c.Domain))
	}
	errs = append(errs, config.PrefixFields("retry", c.Retry.Validate()))
	for i, s := range c.Snapshot {
		if s.Name == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("snapshot[%d].name", i), "is required"))
		}
	}
	return config.Join(errs...)
}
