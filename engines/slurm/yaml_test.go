package slurm

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
)

// yamlDoc is the schema of topology.yaml (topology.yaml.5, 25.05).
type yamlDoc []struct {
	Topology       string `yaml:"topology"`
	ClusterDefault bool   `yaml:"cluster_default"`
	Tree           *struct {
		Switches []struct {
			Switch   string `yaml:"switch"`
			Children string `yaml:"children"`
			Nodes    string `yaml:"nodes"`
		} `yaml:"switches"`
	} `yaml:"tree"`
	Block *struct {
		BlockSizes []int `yaml:"block_sizes"`
		Blocks     []struct {
			Block string `yaml:"block"`
			Nodes string `yaml:"nodes"`
		} `yaml:"blocks"`
	} `yaml:"block"`
	Flat *bool `yaml:"flat"`
}

func parseYAML(t testing.TB, out []byte) yamlDoc {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(out))
	dec.KnownFields(true)
	var doc yamlDoc
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("topology.yaml does not parse: %v\n%s", err, out)
	}
	return doc
}

func yamlEngine(t testing.TB, ts ...TopologyConfig) *Engine {
	t.Helper()
	return newEngine(t, func(c *Config) { c.Plugin, c.SlurmVersion, c.Topologies = PluginYAML, "25.05", ts })
}

func TestYAMLDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec spec
		want string // "name:kind*" per topology, * marks the cluster default
	}{
		{"tree and block", threeAndThree(), "default:tree* block:block"},
		{"tree only", spec{leaves: map[string]string{"l": "n[1-2]"}}, "default:tree*"},
		{"block only", spec{domains: map[string]string{"d": "n[1-2]"}}, "block:block*"},
		{"neither", spec{loose: "n[1-2]"}, "default:flat*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := yamlEngine(t).Render(context.Background(), build(t, tt.spec))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tp := range parseYAML(t, out) {
				kind := map[bool]string{true: "tree"}[tp.Tree != nil] + map[bool]string{true: "block"}[tp.Block != nil] +
					map[bool]string{true: "flat"}[tp.Flat != nil && *tp.Flat]
				if tp.ClusterDefault {
					kind += "*"
				}
				got = append(got, tp.Topology+":"+kind)
			}
			if s := strings.Join(got, " "); s != tt.want {
				t.Errorf("topologies = %q, want %q\n%s", s, tt.want, out)
			}
		})
	}
}

func TestYAMLConfigured(t *testing.T) {
	t.Parallel()
	g := build(t, threeAndThree())
	e := yamlEngine(t,
		TopologyConfig{Name: "fabric", Plugin: KindTree, ClusterDefault: true},
		TopologyConfig{Name: "spineA", Plugin: KindTree, Nodes: "n[01-12]"},
		TopologyConfig{Name: "nvl", Plugin: KindBlock, BlockSizes: []int{4, 8}},
		TopologyConfig{Name: "half", Plugin: KindBlock, Nodes: "n[01-06]"},
		TopologyConfig{Name: "everything", Plugin: KindFlat},
	)
	out, err := e.Render(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	doc := parseYAML(t, out)
	if len(doc) != 5 {
		t.Fatalf("%d topologies:\n%s", len(doc), out)
	}
	if !doc[0].ClusterDefault || doc[1].ClusterDefault || len(doc[0].Tree.Switches) != 9 {
		t.Errorf("fabric topology: %+v", doc[0])
	}
	var names []string
	for _, s := range doc[1].Tree.Switches {
		names = append(names, s.Switch+"="+s.Nodes+s.Children)
	}
	if got := strings.Join(names, " "); got != "leafA1=n[01-04] leafA2=n[05-08] leafA3=n[09-12] spineA=leafA[1-3] core=spineA" {
		t.Errorf("filtered tree = %s", got)
	}
	nvl := doc[2].Block
	if len(nvl.Blocks) != 7 || nvl.Blocks[3].Block != "spineA-pad1" || nvl.Blocks[3].Nodes != "" || !slices.Equal(nvl.BlockSizes, []int{4, 8}) {
		t.Errorf("block topology: %+v", nvl)
	}
	half := doc[3].Block
	if len(half.Blocks) != 2 || half.Blocks[1].Nodes != "n[05-06]" || !slices.Equal(half.BlockSizes, []int{4, 8}) {
		t.Errorf("filtered block topology: %+v", half)
	}
	if doc[4].Flat == nil || !*doc[4].Flat {
		t.Errorf("flat topology: %+v", doc[4])
	}
	if !strings.HasPrefix(string(out), "# topology.yaml for Slurm 25.05.") || !strings.Contains(string(out), "\n---\n") {
		t.Errorf("header or document start missing:\n%s", out)
	}
}

func TestYAMLQuoting(t *testing.T) {
	t.Parallel()
	// Names that YAML would read as numbers, booleans or null must be
	// quoted; "a: b" style IDs are hashed by SafeName already.
	g := build(t, spec{
		links:   []string{"true>123", "true>1e3"},
		leaves:  map[string]string{"123": "n[1-2]", "1e3": "n3"},
		domains: map[string]string{"null": "n[1-2]", "0x10": "n3"},
	})
	out, err := yamlEngine(t).Render(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`switch: "123"`, `switch: "1e3"`, `switch: "true"`, `children: 123,1e3`, `block: "null"`, `block: "0x10"`} {
		if !strings.Contains(string(out), w) {
			t.Errorf("output lacks %s:\n%s", w, out)
		}
	}
	doc := parseYAML(t, out)
	if doc[0].Tree.Switches[2].Switch != "true" || doc[1].Block.Blocks[0].Block != "null" && doc[1].Block.Blocks[1].Block != "null" {
		t.Errorf("names do not round-trip: %+v %+v", doc[0].Tree, doc[1].Block)
	}
}

func TestYAMLErrors(t *testing.T) {
	t.Parallel()
	g := build(t, threeAndThree())
	e := &Engine{cfg: Config{Plugin: PluginYAML}, version: V2411}
	if _, err := e.Render(context.Background(), g); !errors.Is(err, engines.ErrInexpressible) || !strings.Contains(err.Error(), "25.05") {
		t.Errorf("topology.yaml for 24.11: %v", err)
	}
	e = yamlEngine(t, TopologyConfig{Name: "t", Plugin: KindTree, ClusterDefault: true, Nodes: "cpu[1-2]"})
	if _, err := e.Render(context.Background(), g); !errors.Is(err, engines.ErrInexpressible) || !strings.Contains(err.Error(), `topology "t"`) {
		t.Errorf("tree with no node: %v", err)
	}
	e = yamlEngine(t, TopologyConfig{Name: "b", Plugin: KindBlock, ClusterDefault: true, Nodes: "cpu[1-2]"})
	if _, err := e.Render(context.Background(), g); !errors.Is(err, engines.ErrInexpressible) || !strings.Contains(err.Error(), `topology "b"`) {
		t.Errorf("block with no node: %v", err)
	}
}

func TestYAMLCoverage(t *testing.T) {
	t.Parallel()
	g := build(t, spec{leaves: map[string]string{"l": "n[1-4]"}, domains: map[string]string{"d": "n[1-2]"}, loose: "cpu1"})
	tests := []struct {
		name string
		ts   []TopologyConfig
		want string
	}{
		{"default tree", nil, "cpu1"},
		{"block default", []TopologyConfig{{Name: "t", Plugin: KindTree}, {Name: "b", Plugin: KindBlock, ClusterDefault: true}}, "cpu1,n3,n4"},
		{"filtered tree", []TopologyConfig{{Name: "t", Plugin: KindTree, ClusterDefault: true, Nodes: "n[1-3]"}}, "cpu1,n4"},
		{"flat", []TopologyConfig{{Name: "f", Plugin: KindFlat, ClusterDefault: true}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cov := yamlEngine(t, tt.ts...).Coverage(g)
			if got := strings.Join(cov.Uncovered, ","); got != tt.want {
				t.Errorf("Uncovered = %q, want %q (%s)", got, tt.want, cov.Reason)
			}
		})
	}
}
