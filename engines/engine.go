// Package engines defines the contract of toposcope's outputs: the plugins
// that turn a topology graph into what a scheduler reads. Each engine lives
// in a sub-package; app lists them all.
package engines

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/registry"
	"github.com/toposcope/toposcope/topology"
)

// ErrInexpressible is wrapped when a graph cannot be expressed in the
// engine's target format (for example, a Slurm version that does not allow
// it). Nothing is written in that case.
var ErrInexpressible = errors.New("topology cannot be expressed for this target")

// Engine publishes a topology graph.
type Engine interface {
	// Publish renders g and delivers it (writes a file, patches objects).
	// On error, what was published before is left as it was.
	Publish(ctx context.Context, g *topology.Graph) error
}

// ErrNoBudgets is wrapped when an engine that publishes the placement
// budgets tree is asked to publish without it (engines.Engine.Publish
// gives only the graph). Nothing is written in that case.
var ErrNoBudgets = errors.New("needs the placement budgets tree")

// BudgetsPublisher is implemented by engines whose output is the
// placement budgets tree (accounts and shares) rather than the graph
// alone: kueue-budgets. Their host finds them by type assertion and calls
// PublishBudgets with its budgets (the service: the stored budgets of PUT
// /v1/budgets; the CLI: the --budgets file); their Publish, which has no
// budgets, fails with ErrNoBudgets.
type BudgetsPublisher interface {
	Engine
	// PublishBudgets publishes b; g gives the cluster's size (its GPUs).
	PublishBudgets(ctx context.Context, g *topology.Graph, b *Budgets) error
	// RenderBudgets returns the document PublishBudgets would publish,
	// contacting no cluster.
	RenderBudgets(ctx context.Context, g *topology.Graph, b *Budgets) ([]byte, error)
}

// Renderer is implemented by engines whose output is a document, so that
// it can be printed or served without being published.
type Renderer interface {
	// Render returns the document for g.
	Render(ctx context.Context, g *topology.Graph) ([]byte, error)
	// ContentType is the media type of the document.
	ContentType() string
}

// Coverage lists nodes that an engine's output leaves out. Schedulers
// often stop using such nodes silently, so they are always reported.
type Coverage struct {
	// Uncovered are the nodes of the graph that the output does not place,
	// in natural order.
	Uncovered []string `json:"uncovered"`
	// Reason says why they are left out.
	Reason string `json:"reason,omitempty"`
}

// Settler is implemented by engines whose publish can leave work that
// only a later publish completes, when something outside the graph has
// changed (the kueue engine's manageFlavors waits for admitted Workloads
// to finish before it recreates a ResourceFlavor). Settled reports
// whether the last publish left nothing to do; while it is false the
// service publishes again at its next discovery, even when the graph is
// unchanged.
type Settler interface {
	Settled() bool
}

// CoverageReporter is implemented by engines that can leave nodes out.
type CoverageReporter interface {
	// Coverage reports the nodes of g that the output would not cover.
	Coverage(g *topology.Graph) Coverage
}

// Deps are what an engine may need from its host process.
type Deps struct {
	// Logger receives the engine's logs; never nil once defaulted.
	Logger *slog.Logger
	// Stdout is where an engine with no destination configured writes.
	Stdout io.Writer
	// Now returns the current time.
	Now func() time.Time
	// RenderOnly says the engine will only be asked to Render, never to
	// Publish: an engine that publishes to a cluster then needs no
	// client (a request for an engine the operator did not configure).
	RenderOnly bool
}

// WithDefaults fills unset dependencies.
func (d Deps) WithDefaults() Deps {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Stdout == nil {
		d.Stdout = io.Discard
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return d
}

// Factory describes one engine to the registry (internal/registry has
// the meaning of each field).
type Factory = registry.Factory[Engine, Deps]

// NewFactory is the factory of an engine built from its typed Config,
// as providers.NewFactory is a provider's: New decodes params over
// defaults strictly (registry.Decoded: unknown keys and Validate's
// errors name the key and its line) and builds through build, and
// Params are read from the Config's tags.
func NewFactory[C any, PC interface {
	*C
	config.Validator
}, E Engine](name, summary, example string, defaults C, build func(C, Deps) (E, error)) Factory {
	return Factory{
		Name: name, Summary: summary, Example: example, Params: config.SpecOf(defaults),
		New: func(params *yaml.Node, prefix string, deps Deps) (Engine, error) {
			e, err := registry.Decoded[C, PC](params, prefix, deps, defaults, build)
			if err != nil {
				return nil, err // not a nil *E in an interface
			}
			return e, nil
		},
	}
}
