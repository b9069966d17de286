// Package instances is the engine of Topograph's graph output: a JSON
// list of the graph's nodes, each with its instance ID, its switch path
// closest first ("network_layers") and labels (region, zone, NVLink
// domain), the document that Topograph's graph engine writes for tools
// that read it. The document is the same for the same graph: instances
// in order of ID, keys sorted.
package instances

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/topology"
)

// Name is the engine's name in configuration files and on the CLI.
const Name = "instances"

// Labels of an instance.
const (
	LabelRegion    = "topology.kubernetes.io/region"
	LabelZone      = "topology.kubernetes.io/zone"
	LabelDomain    = "accelerator.topograph.run/domain"
	LabelSubDomain = "accelerator.topograph.run/sub-domain"
)

// Config is the engine's configuration.
type Config struct {
	// Output is the file to write; empty writes the document to the
	// engine's standard output.
	Output string `yaml:"output,omitempty" path:"write"`
	// DomainLabels adds each node's NVLink domain and sub-domain as
	// labels (default true; Topograph's test provider adds none).
	DomainLabels *bool `yaml:"domainLabels,omitempty" request:"true"`
}

// DefaultConfig returns the defaults: standard output, domain labels.
func DefaultConfig() Config { return Config{} }

// CLIFlags implements config.Flagged: --output.
func (*Config) CLIFlags() []config.Flag {
	return []config.Flag{{Name: "output", Key: "output", Usage: "output file (written atomically); default standard output"}}
}

// Validate reports invalid fields; every value is valid today.
func (c *Config) Validate() error { return nil }

func (c Config) domainLabels() bool { return c.DomainLabels == nil || *c.DomainLabels }

// Document is the engine's output.
type Document struct {
	Instances []Instance `json:"instances"`
}

// Instance is one node of the graph.
type Instance struct {
	// ID is the node's instance ID, or its name when it has none.
	ID string `json:"id"`
	// NetworkLayers are the IDs of its switches, closest first; empty
	// for a node under no switch.
	NetworkLayers []string `json:"network_layers"`
	// Labels are its region, zone and domain, where known.
	Labels map[string]string `json:"labels,omitempty"`
}

// Engine renders and writes the document. It is safe for concurrent use.
type Engine struct {
	cfg  Config
	deps engines.Deps
}

// Compile-time check that Engine renders.
var _ engines.Renderer = (*Engine)(nil)

// New validates cfg and returns the engine.
func New(cfg Config, deps engines.Deps) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Engine{cfg: cfg, deps: deps.WithDefaults()}, nil
}

// NewFactory returns the registry entry of the engine.
func NewFactory() engines.Factory {
	return engines.Factory{
		Name:    Name,
		Summary: "Topograph's graph document: each node's instance ID, switch path (network_layers) and labels, as JSON",
		New: func(params *yaml.Node, prefix string, deps engines.Deps) (engines.Engine, error) {
			cfg := DefaultConfig()
			if err := config.Decode(params, &cfg, prefix); err != nil {
				return nil, err
			}
			return New(cfg, deps)
		},
		Example: "domainLabels: true\n",
		Params:  config.SpecOf(DefaultConfig()),
	}
}

// ContentType is JSON.
func (e *Engine) ContentType() string { return "application/json" }

// Build returns the document of g: every node, none left out.
func (e *Engine) Build(g *topology.Graph) Document {
	doc := Document{Instances: make([]Instance, 0, len(g.Nodes()))}
	for i := range g.Nodes() {
		n := &g.Nodes()[i]
		in := Instance{ID: cmp.Or(n.InstanceID, n.Name), NetworkLayers: []string{}, Labels: map[string]string{}}
		for _, s := range g.Path(n.Name) {
			in.NetworkLayers = append(in.NetworkLayers, s.ID)
		}
		for k, v := range map[string]string{LabelRegion: n.Region, LabelZone: n.Zone} {
			if v != "" {
				in.Labels[k] = v
			}
		}
		if e.cfg.domainLabels() && n.Domain != "" {
			in.Labels[LabelDomain] = n.Domain
			if n.SubDomain != "" {
				in.Labels[LabelSubDomain] = n.SubDomain
			}
		}
		if len(in.Labels) == 0 {
			in.Labels = nil
		}
		doc.Instances = append(doc.Instances, in)
	}
	slices.SortFunc(doc.Instances, func(a, b Instance) int { return cmp.Compare(a.ID, b.ID) })
	return doc
}

// Render returns the document of g as compact JSON.
func (e *Engine) Render(ctx context.Context, g *topology.Graph) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := json.Marshal(e.Build(g))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return out, nil
}

// Publish writes the document to Output (atomically; an unchanged file
// is not rewritten), or to standard output.
func (e *Engine) Publish(ctx context.Context, g *topology.Graph) error {
	data, err := e.Render(ctx, g)
	if err != nil {
		return err
	}
	_, err = engines.WriteDocument(Name, e.cfg.Output, data, e.deps)
	return err
}
