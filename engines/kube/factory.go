package kube

import (
	"context"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/topology"
)

// Target is the part of a Kubernetes engine's typed configuration that
// the shared factory reads: where its clients come from and its mode.
type Target interface {
	config.Validator
	// KubeTarget returns the engine's client settings and its mode, for
	// the factory to read (and, for an engine that will only render, to
	// set the mode to ModePrint).
	KubeTarget() (*kubeclient.ClientConfig, *string)
}

// Build makes a Kubernetes engine from its decoded configuration and the
// clients its mode needs (none in ModePrint).
type Build[C any] func(cfg C, clients kubeclient.Clients, deps engines.Deps) (engines.Engine, error)

// NewFactory is the registry entry of a Kubernetes engine: New decodes
// params strictly over defaults(), builds the clients the mode needs
// (EngineClients: none when the engine will only render) and calls build;
// Params are read from the Config's tags and the example is print mode,
// which needs no cluster.
func NewFactory[C any, PC interface {
	*C
	Target
}](name, summary string, defaults func() C, build Build[C]) engines.Factory {
	return engines.Factory{
		Name:    name,
		Summary: summary,
		New: func(params *yaml.Node, prefix string, deps engines.Deps) (engines.Engine, error) {
			cfg := defaults()
			if err := config.Decode(params, PC(&cfg), prefix); err != nil {
				return nil, err
			}
			cc, mode := PC(&cfg).KubeTarget()
			clients, err := EngineClients(cc, mode, deps)
			if err != nil {
				return nil, wrapName(name, err)
			}
			return build(cfg, clients, deps)
		},
		Example: "mode: " + ModePrint + "\n",
		Params:  config.SpecOf(defaults()),
	}
}

// Publishing is the Publish, PublishWith and ContentType of a Kubernetes
// engine, embedded in it and made by NewPublishing in its constructor:
// ModePrint writes the engine's Render, ModeDryRun plans against the
// cluster and prints every change, ModeApply applies (Publish, above).
type Publishing struct {
	name, mode string
	engine     Engine
	deps       engines.Deps
}

// NewPublishing returns the Publishing of engine e, named name, in mode.
func NewPublishing(name, mode string, e Engine, deps engines.Deps) Publishing {
	return Publishing{name: name, mode: mode, engine: e, deps: deps.WithDefaults()}
}

// Publish publishes g in the engine's mode.
func (p Publishing) Publish(ctx context.Context, g *topology.Graph) error {
	return p.PublishWith(ctx, g, ApplyOptions{})
}

// PublishWith implements GuardedPublisher: Publish with the caller's
// options (the service's shrink guard).
func (p Publishing) PublishWith(ctx context.Context, g *topology.Graph, opts ApplyOptions) error {
	return Publish(ctx, p.name, p.mode, p.engine, g, p.deps, opts)
}

// ContentType is YAML: every Kubernetes engine renders Kubernetes objects.
func (Publishing) ContentType() string { return "application/yaml" }

// wrapName prefixes err with the engine's name.
func wrapName(name string, err error) error { return fmt.Errorf("%s: %w", name, err) }
