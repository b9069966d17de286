package nscale

import (
	"fmt"
	"net/url"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers/cloud"
)

// Config is the nscale provider's configuration.
type Config struct {
	// TokenSettings hold url (the API base), caFile, insecureSkipVerify,
	// allowHTTP, timeout, retry, token, tokenFile, pageSize, deadline and
	// nodes.
	cloud.TokenSettings `yaml:",inline"`
	// InstanceURL is the Instance API base; when set, host names come
	// from GET /v2/instances (metadata.name).
	InstanceURL string `yaml:"instanceURL,omitempty"`
	// APIVersion is the Radar topology API: "v2" (GET /v2/topology,
	// results keyed by server_id; the default, as the current API
	// documents it) or "v1" (GET /v1/topology, keyed by instance_id).
	APIVersion string `yaml:"apiVersion,omitempty"`
	// Organization and Region are sent as X-Organization and X-Region.
	Organization string `yaml:"organization,omitempty"`
	Region       string `yaml:"region,omitempty" request:"true"`
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
func DefaultConfig() Config {
	return Config{TokenSettings: cloud.DefaultTokenSettings(), APIVersion: "v2"}
}

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	errs := []error{c.TokenSettings.Validate(c.Snapshot != nil)}
	if c.APIVersion != "v1" && c.APIVersion != "v2" {
		errs = append(errs, config.Errorf("apiVersion", "must be v1 or v2, got %q", c.APIVersion))
	}
	if c.Snapshot == nil {
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
	for i, s := range c.Snapshot {
		if s.InstanceID == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("snapshot[%d].instance_id", i), "is required"))
		}
	}
	return config.Join(errs...)
}

// snapshot returns the saved answer as instances; nil when there is none.
func (c Config) snapshot() []cloud.Instance {
	if c.Snapshot == nil {
		return nil
	}
	out := make([]cloud.Instance, 0, len(c.Snapshot))
	for _, s := range c.Snapshot {
		out = append(out, toInstance(result{InstanceID: s.InstanceID, NetworkNodePath: s.NetworkNodePath, BlockID: s.BlockID}, ""))
	}
	return out
}
