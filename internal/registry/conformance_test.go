package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/registry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

func params(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatalf("example params: %v", err)
	}
	if n.Kind == yaml.DocumentNode {
		return n.Content[0]
	}
	return &n
}

// TestProviderContract runs every registered provider through the same
// checks.
func TestProviderContract(t *testing.T) {
	t.Parallel()
	for _, f := range registry.Providers() {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			if f.Summary == "" || f.Example == "" || f.New == nil {
				t.Fatalf("factory %q lacks Summary, Example or New", f.Name)
			}
			p, err := f.New(params(t, f.Example), "params", providers.Deps{}.WithDefaults())
			if err != nil {
				t.Fatalf("New(example): %v", err)
			}
			ctx := context.Background()
			g1, err := p.Discover(ctx, providers.Request{})
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			if len(g1.Nodes()) == 0 {
				t.Fatal("Discover found no node")
			}
			g2, err := p.Discover(ctx, providers.Request{})
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, g1, g2) {
				t.Error("two discoveries of the same source differ")
			}
			// Asking for a subset, plus a node the source does not know,
			// covers exactly those nodes and leaves the stranger unplaced.
			first := g1.Nodes()[0].Name
			sub, err := p.Discover(ctx, providers.Request{Nodes: []providers.NodeRef{{Name: first}, {Name: "stranger-0"}}})
			if err != nil {
				t.Fatalf("Discover(subset): %v", err)
			}
			if got := nodeNames(sub); !slices.Equal(got, []string{first, "stranger-0"}) && !slices.Equal(got, []string{"stranger-0", first}) {
				t.Errorf("subset nodes = %v", got)
			}
			if !slices.Contains(sub.Unplaced(), "stranger-0") {
				t.Errorf("unknown node not reported unplaced: %v", sub.Unplaced())
			}
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := p.Discover(cancelled, providers.Request{}); !errors.Is(err, context.Canceled) {
				t.Errorf("Discover(cancelled ctx) = %v, want context.Canceled", err)
			}
			_, err = f.New(params(t, "noSuchKey: 1"), "params", providers.Deps{}.WithDefaults())
			if !errors.Is(err, config.ErrInvalid) {
				t.Errorf("New(unknown key) = %v, want config.ErrInvalid", err)
			}
		})
	}
}

// TestEngineContract runs every registered engine through the same checks
// on graphs from the first provider.
func TestEngineContract(t *testing.T) {
	t.Parallel()
	g := exampleGraph(t)
	for _, f := range registry.Engines() {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			if f.Summary == "" || f.Example == "" || f.New == nil {
				t.Fatalf("factory %q lacks Summary, Example or New", f.Name)
			}
			var out bytes.Buffer
			e, err := f.New(params(t, f.Example), "params", engines.Deps{Stdout: &out}.WithDefaults())
			if err != nil {
				t.Fatalf("New(example): %v", err)
			}
			ctx := context.Background()
			if err := e.Publish(ctx, g); err != nil {
				t.Fatalf("Publish: %v", err)
			}
			if r, ok := e.(engines.Renderer); ok {
				doc, err := r.Render(ctx, g)
				if err != nil {
					t.Fatal(err)
				}
				again, _ := r.Render(ctx, g)
				if !bytes.Equal(doc, again) {
					t.Error("Render is not deterministic")
				}
				if len(doc) == 0 || r.ContentType() == "" {
					t.Error("empty document or content type")
				}
				if out.Len() > 0 && !bytes.Equal(out.Bytes(), doc) {
					t.Error("Publish to stdout differs from Render")
				}
			}
			if cr, ok := e.(engines.CoverageReporter); ok {
				for _, n := range cr.Coverage(g).Uncovered {
					if _, ok := g.Node(n); !ok {
						t.Errorf("coverage names %q, which is not in the graph", n)
					}
				}
			}
			_, err = f.New(params(t, "noSuchKey: 1"), "params", engines.Deps{}.WithDefaults())
			if !errors.Is(err, config.ErrInvalid) {
				t.Errorf("New(unknown key) = %v, want config.ErrInvalid", err)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	r := registry.Default()
	if _, err := r.Provider("sim"); err != nil {
		t.Error(err)
	}
	if _, err := r.Engine("slurm"); err != nil {
		t.Error(err)
	}
	_, err := r.Engine("nope")
	if !errors.Is(err, registry.ErrUnknownPlugin) {
		t.Errorf("unknown engine: %v", err)
	}
	p := registry.Providers()
	if _, err := registry.New(append(p, p[0]), nil); !errors.Is(err, registry.ErrDuplicatePlugin) {
		t.Errorf("duplicate provider: %v", err)
	}
}

func exampleGraph(t *testing.T) *topology.Graph {
	t.Helper()
	f := registry.Providers()[0]
	p, err := f.New(params(t, f.Example), "params", providers.Deps{}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func nodeNames(g *topology.Graph) []string {
	var out []string
	for _, n := range g.Nodes() {
		out = append(out, n.Name)
	}
	return out
}

func sameJSON(t *testing.T, a, b *topology.Graph) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
