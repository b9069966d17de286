package nebius

import (
	"fmt"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers/cloud"
)

// DefaultURL is the public compute API endpoint.
const DefaultURL = "https://compute.api.nebius.cloud:443"

// Config is the nebius provider's configuration (its params).
type Config struct {
	// TokenSettings hold url (the gRPC endpoint: https://host[:port], or
	// http:// with allowHTTP for a plaintext emulator), caFile,
	// insecureSkipVerify, timeout, retry, token or tokenFile (an IAM
	// access token), pageSize, deadline and nodes.
	cloud.TokenSettings `yaml:",inline"`
	// CredentialsFile is a service account credentials file (as Nebius's
	// CLI writes it: subject-credentials with alg, private-key, kid, iss,
	// sub); its signed JWT is exchanged at TokenURL for an IAM token.
	CredentialsFile string `yaml:"credentialsFile,omitempty" path:"read"`
	// TokenURL is the token exchange service (default DefaultTokenURL).
	TokenURL string `yaml:"tokenURL,omitempty"`
	// Project is the project whose instances are listed (parent_id);
	// empty reads it from the metadata service.
	Project string `yaml:"project,omitempty"`
	// Region is recorded on the nodes (the API lists by project).
	Region string `yaml:"region,omitempty" request:"true"`
	// MetadataURL is the metadata service, read for the project and,
	// with no other token, the instance service account's token
	// (default cloud.DefaultNebiusEndpoint); "-" turns it off.
	MetadataURL string `yaml:"metadataURL,omitempty"`
	// Snapshot is a saved answer used instead of calling the API.
	Snapshot []SnapshotInstance `yaml:"snapshot,omitempty"`
}

// SnapshotInstance is one saved instance.
type SnapshotInstance struct {
	ID string `yaml:"id"`
	// Path is status.infiniband_topology_path.path: root first, as in
	// the API.
	Path     []string `yaml:"path,omitempty"`
	NVLGroup string   `yaml:"nvlInstanceGroupId,omitempty"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	s := cloud.DefaultTokenSettings()
	s.URL = DefaultURL
	return Config{TokenSettings: s, MetadataURL: cloud.DefaultNebiusEndpoint, TokenURL: DefaultTokenURL}
}

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	errs := []error{c.TokenSettings.Validate(c.Snapshot != nil)}
	if c.Snapshot == nil {
		tc := c.Connection
		tc.URL = c.TokenURL
		if err := tc.Validate(); err != nil {
			errs = append(errs, config.PrefixFields("tokenURL", err))
		}
	}
	if c.Snapshot == nil && c.Project == "" && c.MetadataURL == "-" {
		errs = append(errs, config.Errorf("project", "is required when metadataURL is off"))
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
		out = append(out, fromAPI(instance{ID: s.ID, Path: s.Path, NVLGroup: s.NVLGroup}, c.Region))
	}
	return out
}
