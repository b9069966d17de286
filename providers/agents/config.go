package agents

import (
	"fmt"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
)

// Values of Config.Missing.
const (
	// MissingUnplaced keeps a requested node with no fresh report, in no
	// domain, and logs how many there were (default).
	MissingUnplaced = "unplaced"
	// MissingError fails the discovery when a requested node has no
	// fresh report.
	MissingError = "error"
)

// DefaultMaxAge is how old a report may be before it is ignored.
const DefaultMaxAge = time.Hour

// Config is the agents provider's configuration.
type Config struct {
	// Server, when set, is the toposcope server whose reports are read
	// (GET /v1/agents). Without it the provider reads the reports of the
	// server it runs in, which only `toposcope serve` has.
	Server *httpretry.Connection `yaml:"server,omitempty"`
	// Token (or TokenFile) is the server's bearer token, if it asks for
	// one.
	Token     string `yaml:"token,omitempty"`
	TokenFile string `yaml:"tokenFile,omitempty" path:"read"`
	// MaxAge ignores reports received longer ago (default 1h; 0 accepts
	// any age). Agents report every --interval, so this should be a few
	// intervals.
	MaxAge time.Duration `yaml:"maxAge" request:"true"`
	// Nodes is a hostlist of the nodes to cover when the request names
	// none (default: every node with a fresh report).
	Nodes string `yaml:"nodes,omitempty" request:"true"`
	// Missing is MissingUnplaced (default) or MissingError.
	Missing string `yaml:"missing,omitempty" request:"true"`
	// Reports, when set, are used instead of a server: node facts given
	// inline, taken as just received (examples, tests, or nodes without
	// an agent).
	Reports []providers.NodeFacts `yaml:"reports,omitempty"`
}

// DefaultConfig returns the defaults: the server's own reports, at most
// an hour old, missing nodes unplaced.
func DefaultConfig() Config {
	return Config{MaxAge: DefaultMaxAge, Missing: MissingUnplaced}
}

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	var errs []error
	if c.Server != nil {
		errs = append(errs, config.PrefixFields("server", c.Server.Validate()))
	}
	if c.Server != nil && len(c.Reports) > 0 {
		errs = append(errs, config.Errorf("reports", "server and reports are alternatives: set one"))
	}
	for i, r := range c.Reports {
		if r.Node == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("reports[%d].node", i), "is required"))
		}
		if r.GPUs < 0 {
			errs = append(errs, config.Errorf(fmt.Sprintf("reports[%d].gpus", i), "must not be negative"))
		}
	}
	if c.Server == nil && (c.Token != "" || c.TokenFile != "") {
		errs = append(errs, config.Errorf("token", "needs server: a token is only sent to a remote server"))
	}
	errs = append(errs, c.token().Check("token", "tokenFile", false))
	if c.MaxAge < 0 {
		errs = append(errs, config.Errorf("maxAge", "must not be negative, got %s", c.MaxAge))
	}
	if c.Nodes != "" {
		if _, err := hostlist.Expand(c.Nodes); err != nil {
			errs = append(errs, config.Errorf("nodes", "%v", err))
		}
	}
	switch c.Missing {
	case MissingUnplaced, MissingError:
	default:
		errs = append(errs, config.Errorf("missing", "%q: want %s or %s", c.Missing, MissingUnplaced, MissingError))
	}
	return config.Join(errs...)
}

func (c Config) token() httpretry.Secret { return httpretry.Secret{Value: c.Token, File: c.TokenFile} }
