package example

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// build decodes doc as the engine's params, as the registry does.
func build(t *testing.T, doc string, deps engines.Deps) (engines.Engine, error) {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	var params *yaml.Node // an empty document is no params
	if len(n.Content) > 0 {
		params = n.Content[0]
	}
	return NewFactory().New(params, "params", deps)
}

// fabric is two leaves under a spine, a node on each, and a node under
// no switch.
func fabric(t *testing.T) *topology.Graph {
	t.Helper()
	b := topology.NewBuilder()
	for _, n := range []string{"gpu2", "gpu10", "cpu1"} {
		b.AddNode(topology.Node{Name: n})
	}
	b.AddPath("gpu2", []topology.SwitchInfo{{ID: "leaf1"}, {ID: "spine1"}})
	b.AddPath("gpu10", []topology.SwitchInfo{{ID: "leaf2"}, {ID: "spine1"}})
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		want      []string // every key the error must name, with its line
	}{
		{"empty separator", "separator: ''\n", []string{`params.separator (line 1): want a non-empty string on one line, got ""`}},
		{"every problem at once", "separator: \"a\\nb\"\nunplaced: drop\n",
			[]string{"params.separator (line 1)", `params.unplaced (line 2): want list or omit, got "drop"`}},
		{"unknown key", "separator: x\nunplace: omit\n", []string{"params.unplace (line 2)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := build(t, tt.doc, engines.Deps{})
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("err = %v, want config.ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	g := fabric(t)
	tests := []struct {
		name, doc string
		uncovered []string
	}{
		{"defaults", "", nil},
		{"example", exampleParams, []string{"cpu1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			e, err := build(t, tt.doc, engines.Deps{Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			doc, err := e.(engines.Renderer).Render(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tt.name+".txt"), doc, *update)
			if err := e.Publish(context.Background(), g); err != nil || !bytes.Equal(out.Bytes(), doc) {
				t.Errorf("Publish to stdout = %q, %v; want what Render gives", out.String(), err)
			}
			cov := e.(engines.CoverageReporter).Coverage(g)
			if !slices.Equal(cov.Uncovered, tt.uncovered) {
				t.Errorf("Coverage = %v, want %v", cov.Uncovered, tt.uncovered)
			}
		})
	}
}

func TestPublishFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "paths.txt")
	e, err := build(t, "output: "+path+"\n", engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	g := fabric(t)
	if err := e.Publish(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := e.(engines.Renderer).Render(context.Background(), g)
	if !bytes.Equal(got, want) {
		t.Errorf("file = %q, want %q", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.Publish(ctx, g); !errors.Is(err, context.Canceled) {
		t.Errorf("Publish(cancelled) = %v, want context.Canceled", err)
	}
}
