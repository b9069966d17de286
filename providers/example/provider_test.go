package example

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/testenv/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// build decodes doc as the provider's params, as the registry does.
func build(t *testing.T, doc string) (providers.Provider, error) {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	return NewFactory().New(n.Content[0], "params", providers.Deps{})
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		want      []string // every key the error must name
	}{
		{"no nodes", "zone: a\n", []string{"params.nodes", "is required"}},
		{"every problem at once", "nodes:\n  - {name: '', gpus: -1}\n  - {name: a, path: [leaf1, '']}\n  - {name: a}\n",
			[]string{"params.nodes[0].name (line 2): empty name", "params.nodes[0].gpus (line 2): must be 0 to 1024, got -1",
				"params.nodes[1].path[1] (line 3): is empty", "params.nodes[2].name (line 4): \"a\" is listed twice"}},
		{"unknown key", "nodes: [{name: a}]\nzones: b\n", []string{"zones"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := build(t, tt.doc)
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

func TestDiscover(t *testing.T) {
	t.Parallel()
	p, err := build(t, exampleParams+"zone: z1\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		nodes []providers.NodeRef
	}{
		{"all", nil},
		{"subset and a stranger", []providers.NodeRef{{Name: "gpu003"}, {Name: "cpu01"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := p.Discover(context.Background(), providers.Request{Nodes: tt.nodes})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", strings.ReplaceAll(tt.name, " ", "-")+".json"), append(got, '\n'), *update)
		})
	}
}
