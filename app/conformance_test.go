package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/plugins"
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

// TestProviderContract runs every registered provider, and the template
// a new provider is copied from (providers/example, not shipped), through
// the same checks.
func TestProviderContract(t *testing.T) {
	t.Parallel()
	for _, f := range testedProviders() {
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

// TestEngineContract runs every registered engine, and the template a
// new engine is copied from (engines/example, not shipped), through the
// same checks on graphs from the first provider.
func TestEngineContract(t *testing.T) {
	t.Parallel()
	g := exampleGraph(t)
	for _, f := range testedEngines() {
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
			if bp, ok := e.(engines.BudgetsPublisher); ok {
				// An engine of the budgets tree cannot publish the graph
				// alone; with budgets it publishes what it renders.
				if err := e.Publish(ctx, g); !errors.Is(err, engines.ErrNoBudgets) {
					t.Errorf("Publish without budgets = %v, want ErrNoBudgets", err)
				}
				b := &placement.Budgets{Accounts: []placement.AccountSpec{{Name: "a", Shares: placement.Shares(2)}, {Name: "b"}}}
				if err := bp.PublishBudgets(ctx, g, eb(t, b)); err != nil {
					t.Fatalf("PublishBudgets: %v", err)
				}
				doc, err := bp.RenderBudgets(ctx, g, eb(t, b))
				if err != nil || len(doc) == 0 || !bytes.Equal(out.Bytes(), doc) {
					t.Errorf("RenderBudgets = %d bytes, %v; differs from PublishBudgets to stdout", len(doc), err)
				}
			} else if err := e.Publish(ctx, g); err != nil {
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
	r := app.Registry()
	if _, err := r.Provider("sim"); err != nil {
		t.Error(err)
	}
	if _, err := r.Engine("slurm"); err != nil {
		t.Error(err)
	}
	_, err := r.Engine("nope")
	if !errors.Is(err, plugins.ErrUnknownPlugin) {
		t.Errorf("unknown engine: %v", err)
	}
	if _, err := r.NewProvider("nope", "provider", nil, providers.Deps{}); plugins.FieldOf(err) != "provider.name" {
		t.Errorf("NewProvider(unknown) = %v, want a provider.name field error", err)
	}
	if _, err := r.NewEngine("slurm", "engines[2]", params(t, "plugin: topology/nope"), engines.Deps{}); plugins.FieldOf(err) != "engines[2].params.plugin" {
		t.Errorf("NewEngine(bad param) = %v, want an engines[2].params.plugin field error", err)
	}
	p := app.Providers()
	if _, err := plugins.New(plugins.Lists{Providers: append(p, p[0])}); !errors.Is(err, plugins.ErrDuplicatePlugin) {
		t.Errorf("duplicate provider: %v", err)
	}
	s := app.LedgerSources()
	if _, err := plugins.New(plugins.Lists{LedgerSources: append(s, s[0])}); !errors.Is(err, plugins.ErrDuplicatePlugin) {
		t.Errorf("duplicate ledger source: %v", err)
	}
}

// TestLedgerSourceConformance runs every registered ledger source through
// the same contract: it is listed by name, rejects unknown parameters,
// and one with an Example builds from it, reads no records from an empty
// scheduler and stops on a cancelled context.
func TestLedgerSourceConformance(t *testing.T) {
	t.Parallel()
	r := app.Registry()
	for _, f := range r.LedgerSources() {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			if f.Summary == "" || f.New == nil {
				t.Fatal("Summary and New are required")
			}
			if _, err := r.LedgerSource(f.Name); err != nil {
				t.Fatal(err)
			}
			deps := placement.SourceDeps{Logger: slog.New(slog.DiscardHandler)}
			_, err := r.NewLedgerSource(f.Name, "placement.sources[0]", params(t, "noSuchKey: 1"), deps)
			if !errors.Is(err, config.ErrInvalid) || plugins.FieldOf(err) != "placement.sources[0].params.noSuchKey" {
				t.Errorf("New(unknown key) = %v, want a field error on placement.sources[0].params.noSuchKey", err)
			}
			if f.Example == "" {
				return
			}
			src, err := r.NewLedgerSource(f.Name, "source", params(t, f.Example), deps)
			if err != nil {
				t.Fatalf("New(Example): %v", err)
			}
			if src.Name() != f.Name {
				t.Errorf("Name() = %q, want %q", src.Name(), f.Name)
			}
			recs, err := src.Records(context.Background(), time.Now())
			if err != nil || len(recs) != 0 {
				t.Errorf("Records = %d records, %v; want none", len(recs), err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := src.Records(ctx, time.Now()); err == nil {
				t.Error("Records on a cancelled context succeeded")
			}
		})
	}
}

func exampleGraph(t *testing.T) *topology.Graph {
	t.Helper()
	f := app.Providers()[0]
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

// eb flattens placement budgets for the engine (plugins.EngineBudgets).
func eb(t testing.TB, b *placement.Budgets) *engines.Budgets {
	t.Helper()
	out, err := plugins.EngineBudgets(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
