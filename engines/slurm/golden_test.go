package slurm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/topology"
)

// goldenOutputs are the configurations every golden graph is rendered
// with; file names end in "<name>.<ext>".
func goldenOutputs() []struct {
	name, ext string
	edit      func(*Config)
} {
	block := func(v string) func(*Config) { return func(c *Config) { c.Plugin, c.SlurmVersion = PluginBlock, v } }
	return []struct {
		name, ext string
		edit      func(*Config)
	}{
		{"tree-22.05", "conf", version("22.05")},
		{"tree-25.05", "conf", version("25.05")},
		{"block-23.11", "conf", block("23.11")},
		{"block-24.11", "conf", block("24.11")},
		{"block-25.05", "conf", block("25.05")},
		{"yaml-25.05", "yaml", func(c *Config) { c.Plugin, c.SlurmVersion = PluginYAML, "25.05" }},
	}
}

// TestGolden renders the bundled models and a few synthetic graphs with
// every output. Outputs a graph cannot be expressed in (for example blocks
// for a graph with no domain) are golden-checked as their error text.
// Run `go test -update` to regenerate testdata/.
func TestGolden(t *testing.T) {
	t.Parallel()
	graphs := map[string]func(t testing.TB) *topology.Graph{
		"three-and-three": func(t testing.TB) *topology.Graph { return build(t, threeAndThree()) },
		"empty-switches": func(t testing.TB) *topology.Graph {
			return build(t, spec{
				links:   []string{"core>spine1", "core>spine2", "spine1>leaf1", "spine1>leaf2", "spine2>leaf3"},
				leaves:  map[string]string{"leaf1": "n[1-4]", "leaf2": "", "leaf3": ""},
				domains: map[string]string{"d1": "n[1-4]"},
				loose:   "cpu[1-2]",
			})
		},
		"nvl72-gen-300": func(t testing.TB) *topology.Graph {
			return generated(t, sim.GenerateOptions{Shape: sim.ShapeNVL72, Nodes: 300})
		},
		"random-7": func(t testing.TB) *topology.Graph {
			return randomGraph(t, 7, randomOptions{domainSize: 3, emptyLeaves: true})
		},
	}
	for _, m := range bundledModels() {
		graphs[m] = func(t testing.TB) *topology.Graph { return model(t, m) }
	}
	for name, mk := range graphs {
		for _, o := range goldenOutputs() {
			t.Run(name+"/"+o.name, func(t *testing.T) {
				t.Parallel()
				e := newEngine(t, o.edit)
				out, err := e.Render(context.Background(), mk(t))
				errFile, outFile := name+"."+o.name+".err", name+"."+o.name+"."+o.ext
				if *update { // a case may move from an error to a file or back
					_ = os.Remove(filepath.Join("testdata", errFile))
					_ = os.Remove(filepath.Join("testdata", outFile))
				}
				if err != nil {
					golden(t, errFile, []byte(err.Error()+"\n"))
					return
				}
				again, _ := e.Render(context.Background(), mk(t))
				if !bytes.Equal(out, again) {
					t.Fatal("two renders of equal graphs differ")
				}
				golden(t, outFile, out)
			})
		}
	}
}
