package lambda

import (
	"errors"
	"fmt"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers/cloud"
)

// Defaults of Config.
const (
	DefaultPageSize  = 100
	DefaultDeadline  = 5 * time.Minute
	maxPagesPerQuery = 100_000
)

// Config is the lambda provider's configuration.
type Config struct {
	// Connection holds url (the API base, also the endpoint override),
	// caFile, insecureSkipVerify, allowHTTP, timeout and retry.
	httpretry.Connection `yaml:",inline"`
	// WorkspaceID and Region select the instances (workspace_id, region).
	WorkspaceID string `yaml:"workspaceId,omitempty"`
	Region      string `yaml:"region,omitempty"`
	// Token (or TokenFile) is the API token; a request's "token"
	// credential overrides it.
	Token     string `yaml:"token,omitempty"`
	TokenFile string `yaml:"tokenFile,omitempty"`
	// PageSize is page_size, 1-1000 (default 100).
	PageSize int `yaml:"pageSize,omitempty"`
	// Deadline bounds one discovery (default 5m).
	Deadline time.Duration `yaml:"deadline,omitempty"`
	// Nodes maps instance IDs to node names (default: the ID).
	Nodes map[string]string `yaml:"nodes,omitempty"`
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
func DefaultConfig() Config { return Config{PageSize: DefaultPageSize, Deadline: DefaultDeadline} }

// Validate reports every invalid field as config.FieldErrors.
func (c Config) Validate() error {
	var errs []error
	if c.Snapshot == nil {
		errs = append(errs, c.Connection.Validate())
		if c.WorkspaceID == "" {
			errs = append(errs, config.Errorf("workspaceId", "is required"))
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
		if s.ID == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("snapshot[%d].id", i), "is required"))
		}
	}
	return errors.Join(errs...)
}

func (c Config) token() httpretry.Secret { return httpretry.Secret{Value: c.Token, File: c.TokenFile} }

// snapshot returns the saved answer as instances.
func (c Config) snapshot() []cloud.Instance {
	out := make([]cloud.Instance, 0, len(c.Snapshot))
	for _, s := range c.Snapshot {
		out = append(out, cloud.Instance{ID: s.ID, Path: s.NetworkPath, Domain: s.DomainID, SubDomain: s.CliqueID})
	}
	return out
}
