package nscale

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers/cloud"
)

// Defaults of Config.
const (
	DefaultPageSize = 100
	DefaultDeadline = 5 * time.Minute
	maxPages        = 100_000
)

// Config is the nscale provider's configuration.
type Config struct {
	// Connection holds url (the Radar API base, also the endpoint
	// override), caFile, insecureSkipVerify, allowHTTP, timeout and retry.
	httpretry.Connection `yaml:",inline"`
	// InstanceURL is the Instance API base; when set, host names come
	// from GET /v2/instances (metadata.name).
	InstanceURL string `yaml:"instanceURL,omitempty"`
	// Organization and Region are sent as X-Organization and X-Region.
	Organization string `yaml:"organization,omitempty"`
	Region       string `yaml:"region,omitempty"`
	// Token (or TokenFile) is the API token; a request's "token"
	// credential overrides it.
	Token     string `yaml:"token,omitempty"`
	TokenFile string `yaml:"tokenFile,omitempty"`
	// PageSize is limit, 1-1000 (default 100).
	PageSize int `yaml:"pageSize,omitempty"`
	// Deadline bounds one discovery (default 5m).
	Deadline time.Duration `yaml:"deadline,omitempty"`
	// Nodes maps instance IDs to node names.
	Nodes map[string]string `yaml:"nodes,omitempty"`
	// Snapshot, when set, is used instead of calling the API.
	Snapshot []SnapshotInstance `yaml:"snapshot,omitempty"`
}

// SnapshotInstance is one result of a saved answer.
type SnapshotInstance struct {
	InstanceID      string   `yaml:"instance_id"`
	NetworkNodePath []string `yaml:"network_node_path,omitempty"` // root first, as in the API
	BlockID         string   `yaml:"block_id,omitempty"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{PageSize: DefaultPageSize, Deadline: DefaultDeadline} }

// Validate reports every invalid field as config.FieldErrors.
func (c Config) Validate() error {
	var errs []error
	if c.Snapshot == nil {
		errs = append(errs, c.Connection.Validate())
		if c.Organization == "" {
			errs = append(errs, config.Errorf("organization", "is required"))
		}
		if c.Region == "" {
			errs = append(errs, config.Errorf("region", "is required"))
		}
		if c.InstanceURL != "" {
			inst := c.Connection
			inst.URL = c.InstanceURL
			if err := inst.Validate(); err != nil {
				errs = append(errs, config.Errorf("instanceURL", "%v", err))
			} else if u, _ := url.Parse(c.InstanceURL); u == nil {
				errs = append(errs, config.Errorf("instanceURL", "invalid"))
			}
		}
	}
	errs = append(errs, c.token().Check("token", "tokenFile", false))
	if c.PageSize < 1 || c.PageSize > 1000 {
		errs = append(errs, config.Errorf("pageSize", "must be between 1 and 1000, not %d", c.PageSize))
	}
	if c.Deadline <= 0 {
		errs = append(errs, config.Errorf("deadline", "must be positive"))
	}
	for i, s := range c.Snapshot {
		if s.InstanceID == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("snapshot[%d].instance_id", i), "is required"))
		}
	}
	return errors.Join(errs...)
}

func (c Config) token() httpretry.Secret { return httpretry.Secret{Value: c.Token, File: c.TokenFile} }

// snapshot returns the saved answer as instances.
func (c Config) snapshot() []cloud.Instance {
	out := make([]cloud.Instance, 0, len(c.Snapshot))
	for _, s := range c.Snapshot {
		out = append(out, toInstance(result(s), ""))
	}
	return out
}
