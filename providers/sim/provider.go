// Package sim is the simulation provider: it serves the topology of a
// cluster described by a YAML model, so that engines and schedulers can be
// exercised without any cloud or fabric manager.
//
// A model is one of the bundled models (see Bundled) or a file; the format
// is documented in docs/models.md. Generate writes large regular models
// (fat trees, NVL72 racks) of any size up to a million nodes.
package sim

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "sim"

// Config is the sim provider's configuration.
type Config struct {
	// Model is a bundled model name or the path of a model file.
	Model string `yaml:"model" request:"true" path:"read"`
}

// DefaultConfig returns the default configuration: the bundled
// "small-tree" model.
func DefaultConfig() Config {
	return Config{Model: "small-tree"}
}

// CLIFlags implements config.Flagged: --model.
func (*Config) CLIFlags() []config.Flag {
	return []config.Flag{{Name: "model", Key: "model", Usage: "bundled model name or model file path"}}
}

// Validate reports an invalid configuration as config.FieldErrors.
func (c *Config) Validate() error {
	if strings.TrimSpace(c.Model) == "" {
		return config.Errorf("model", "is required: a bundled model (%s) or the path of a model file",
			strings.Join(bundledNames(), ", "))
	}
	return nil
}

// Provider serves the topology of one model, loaded once.
type Provider struct {
	model *Model
	log   *slog.Logger
}

// New validates cfg, loads its model and returns the provider.
func New(cfg Config, deps providers.Deps) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := Load(cfg.Model)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return newProvider(m, deps), nil
}

func newProvider(m *Model, deps providers.Deps) *Provider {
	deps = deps.WithDefaults()
	info := m.Info()
	deps.Logger.Debug("sim model loaded", "model", info.Name, "source", m.Source(), "nodes", info.Nodes)
	return &Provider{model: m, log: deps.Logger}
}

// Model returns the provider's model.
func (p *Provider) Model() *Model { return p.model }

// Discover returns the model's graph for req (see Model.Graph). It stops
// with ctx's error when ctx is cancelled.
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	g, err := p.model.graph(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	p.log.Debug("sim discovery", "model", p.model.name, "requested", len(req.Nodes),
		"nodes", len(g.Nodes()), "switches", len(g.Switches()), "domains", len(g.Domains()))
	return g, nil
}

// NewFactory describes the sim provider to the registry.
func NewFactory() providers.Factory {
	f := providers.NewFactory(Name, "simulated cluster from a YAML model (bundled: "+strings.Join(bundledNames(), ", ")+"; or a file)",
		exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) {
			m, err := Load(c.Model)
			if err != nil {
				return nil, &config.FieldError{Field: "model", Err: err}
			}
			return newProvider(m, d), nil
		})
	f.Params = paramSpec()
	return f
}

// paramSpec is the spec of Config: a request may choose a bundled model by
// name, never a model file (a path is the operator's).
func paramSpec() config.ParamSpec {
	s := config.SpecOf(DefaultConfig())
	s.Check = func(key string, v *yaml.Node) error {
		if key == "model" && !slices.Contains(bundledNames(), v.Value) {
			return fmt.Errorf("%w: a request may name a bundled model (%s), not a file", config.ErrOperatorOnly, strings.Join(bundledNames(), ", "))
		}
		return nil
	}
	return s
}
