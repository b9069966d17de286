// Package example is the template of an engine: copy this folder to add
// one. It writes a plain text document, one line per node with its
// switch path, so that what is left is the shape every engine has:
//
//   - config.go: the typed Config with its DefaultConfig and its Validate
//     (on the pointer, every problem a config.FieldError named by its
//     YAML key, joined with config.Join), beside it;
//   - example.go: exampleParams, parameters that build a working engine
//     with no outside service (the conformance test, the docs);
//   - engine.go: New (validate, keep the dependencies it is given: no
//     package-level state), Publish (write what Render returns, or write
//     nothing on error), the optional abilities it has (Render and
//     ContentType for engines.Renderer, Coverage for
//     engines.CoverageReporter: never leave a node out without naming
//     it), and NewFactory, the registry entry (engines.NewFactory:
//     strict decoding, Params read from the Config's tags);
//   - engine_test.go: a table of bad configurations and golden documents
//     under testdata/ (go test -update rewrites them).
//
// To ship a copy, add its NewFactory to app/registry.go: the conformance
// test (app) then runs it through the contract every engine meets. This
// template is run through that test too, but is not in the shipped list.
package example

import (
	"bytes"
	"context"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/topology"
)

// Name is the engine's name in configuration and on the command line.
const Name = "example"

// Engine writes one line per node: its name, then its switches, the
// leaf first.
type Engine struct {
	cfg  Config
	deps engines.Deps
}

// The optional abilities are checked where they are declared.
var (
	_ engines.Renderer         = (*Engine)(nil)
	_ engines.CoverageReporter = (*Engine)(nil)
)

// New validates cfg and returns the engine.
func New(cfg Config, deps engines.Deps) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Engine{cfg: cfg, deps: deps.WithDefaults()}, nil
}

// Render returns the document of g: the nodes in the graph's order
// (natural order of names), so that the same graph gives the same bytes.
func (e *Engine) Render(ctx context.Context, g *topology.Graph) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, n := range g.Nodes() {
		path := g.Path(n.Name)
		if len(path) == 0 && e.cfg.Unplaced == UnplacedOmit {
			continue // Coverage names it
		}
		b.WriteString(n.Name)
		for i, s := range path {
			if i == 0 {
				b.WriteString(": ")
			} else {
				b.WriteString(e.cfg.Separator)
			}
			b.WriteString(s.Name) // SafeName: stable and free of separators
		}
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// ContentType is plain text.
func (e *Engine) ContentType() string { return "text/plain; charset=utf-8" }

// Coverage names the nodes the document leaves out: with UnplacedOmit,
// the nodes under no switch.
func (e *Engine) Coverage(g *topology.Graph) engines.Coverage {
	if e.cfg.Unplaced != UnplacedOmit {
		return engines.Coverage{}
	}
	return engines.Coverage{Uncovered: g.NodesWithoutSwitch(), Reason: "under no switch (unplaced: omit)"}
}

// Publish writes the document to Output (atomically; an unchanged file
// is not rewritten), or to standard output. On error nothing is written.
func (e *Engine) Publish(ctx context.Context, g *topology.Graph) error {
	data, err := e.Render(ctx, g)
	if err != nil {
		return err
	}
	changed, err := engines.WriteDocument(Name, e.cfg.Output, data, e.deps)
	if err != nil {
		return err
	}
	e.deps.Logger.DebugContext(ctx, Name+": published", "output", e.cfg.Output, "changed", changed, "bytes", len(data))
	return nil
}

// NewFactory is the engine's registry entry.
func NewFactory() engines.Factory {
	return engines.NewFactory(Name, "template: each node and its switch path, one line each", exampleParams, DefaultConfig(), New)
}
