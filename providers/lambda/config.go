package lambda

import (
	"fmt"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers/cloud"
)

// Config is the lambda provider's configuration.
type Config struct {
	// TokenSettings hold url (the API base), caFile, insecureSkipVerify,
	// allowHTTP, timeout, retry, token, tokenFile, pageSize, deadline and
	// nodes.
	cloud.TokenSettings `yaml:",inline"`
	// WorkspaceID and Region select the instances (workspace_id, region).
	WorkspaceID string `yaml:"workspaceId,omitempty"`
	Region      string `yaml:"region,omitempty" request:"true"`
	// Snapshot, when set, is used instead of calling the API.
	Snapshot []SnapshotInstance `yaml:"snapshot,omitempty"`
}

// SnapshotInstance is one instance of a saved answer.
type SnapshotInstance struct {
	ID          string   `yaml:"id"`
	NetworkPath []string `yaml:"networkPath,omitempty"` // leaf first, as in the API
	DomainID    string   `yaml:"domainId,omitempty"`
	CliqueID    string   `yaml:"cliqueId,omitempty"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{TokenSettings: cloud.DefaultTokenSettings()} }

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	errs := []error{c.TokenSettings.Validate(c.Snapshot != nil)}
	if c.Snapshot == nil {
		if c.WorkspaceID == "" {
			errs = append(errs, config.Errorf("workspaceId", "is required"))
		}
	}
	for i, s := range c.Snapshot {
		if s.ID == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("snapshot[%d].id", i), "is required"))
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
		out = append(out, cloud.Instance{ID: s.ID, Path: s.NetworkPath, Domain: s.DomainID, SubDomain: s.CliqueID})
	}
	return out
}
