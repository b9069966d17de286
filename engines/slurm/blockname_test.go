package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/topology"
)

// domainsGraph has the given domains (ID → node names), no switch.
func domainsGraph(t *testing.T, doms map[string][]string) *topology.Graph {
	t.Helper()
	b := topology.NewBuilder()
	for d, nodes := range doms {
		for _, n := range nodes {
			b.AddNode(topology.Node{Name: n, GPUs: 4})
			b.AddToDomain(n, d, "")
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestBlockName runs the cases of Topograph's blockName tests
// (pkg/translate/topology_test.go, TestBlockNameFormatter and
// TestToBlockTopologyWithFormattedBlockNames, at commit e2b6250) through
// the Slurm engine: the same names, and an error naming the node or the
// blocks where Topograph fails.
func TestBlockName(t *testing.T) {
	t.Parallel()
	topo := map[string][]string{"B1": {"Node104", "Node105", "Node106"}, "B2": {"Node201", "Node202", "Node205"}}
	tests := []struct {
		name    string
		doms    map[string][]string
		re, fmt string
		want    []string // lines of the output
		wantErr string
	}{
		{"formatted block names", topo, `^Node([0-9])[0-9]{2}$`, `domain${1}`,
			[]string{"BlockName=domain1 Nodes=Node[104-106]\n", "BlockName=domain2 Nodes=Node[201-202,205]\n"}, ""},
		{"unanchored match", map[string][]string{"d": {"gpu-d05-r04-srv4", "gpu-d05-r04-srv5"}}, `d([0-9]{2})-r([0-9]{2})`, `domain${1}_rack${2}`,
			[]string{"BlockName=domain05_rack04 Nodes=gpu-d05-r04-srv[4-5]\n"}, ""},
		{"per sub-domain names", map[string][]string{"r1": {"r1-h0", "r1-h1"}, "r2": {"r2-h0", "r2-h1"}}, `^(r[0-9]+)-`, `${1}`,
			[]string{"BlockName=r1 Nodes=r1-h[0-1]\n", "BlockName=r2 Nodes=r2-h[0-1]\n"}, ""},
		{"unmatched node", map[string][]string{"b": {"domain001", "legacy001"}}, `^domain([0-9]{3})`, `block${1}`,
			nil, `node "legacy001" of block "b" does not match blockName.nodeNameRegexp "^domain([0-9]{3})"`},
		{"nodes produce different names", map[string][]string{"b": {"domain001", "domain002"}}, `^domain([0-9]{3})`, `block${1}`,
			nil, `the nodes of block "b" give different blockName names, "block001" (domain001) and "block002" (domain002)`},
		{"format produces an empty name", map[string][]string{"b": {"node"}}, `^node()$`, `${1}`,
			nil, `blockName.format "${1}" gives an empty name for node "node" of block "b"`},
		{"blocks produce duplicate names", map[string][]string{"b1": {"domain001"}, "b2": {"domain002"}}, `^domain[0-9]{3}`, `shared`,
			nil, `blocks "b1" and "b2" both get the blockName name "shared"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, func(c *Config) {
				c.Plugin, c.SlurmVersion, c.BlockName = PluginBlock, "25.05", &BlockName{NodeNameRegexp: tt.re, Format: tt.fmt}
			})
			out, err := e.Render(context.Background(), domainsGraph(t, tt.doms))
			if tt.wantErr != "" {
				if !errors.Is(err, engines.ErrInexpressible) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Render = %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range tt.want {
				if !strings.Contains(string(out), l) {
					t.Errorf("output lacks %q:\n%s", l, out)
				}
			}
		})
	}
}

// TestBlockNameConfig: Topograph's configuration errors, each naming the
// field.
func TestBlockNameConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"bad regexp", func(c *Config) { c.Plugin, c.BlockName = PluginBlock, &BlockName{NodeNameRegexp: "[", Format: "${1}"} }, "blockName.nodeNameRegexp"},
		{"empty regexp", func(c *Config) { c.Plugin, c.BlockName = PluginBlock, &BlockName{Format: "${1}"} }, "blockName.nodeNameRegexp"},
		{"empty format", func(c *Config) { c.Plugin, c.BlockName = PluginBlock, &BlockName{NodeNameRegexp: "^node([0-9]+)"} }, "blockName.format"},
		{"tree plugin", func(c *Config) { c.BlockName = &BlockName{NodeNameRegexp: "^node([0-9]+)$", Format: "block${1}"} }, "blockName"},
		{"tree topology", func(c *Config) {
			c.Plugin = PluginYAML
			c.Topologies = []TopologyConfig{{Name: "topo", Plugin: KindTree, ClusterDefault: true, BlockName: &BlockName{NodeNameRegexp: "x", Format: "y"}}}
		}, "topologies[0].blockName"},
		{"block topology with a bad regexp", func(c *Config) {
			c.Plugin = PluginYAML
			c.Topologies = []TopologyConfig{{Name: "topo", Plugin: KindBlock, ClusterDefault: true, BlockName: &BlockName{NodeNameRegexp: "[", Format: "y"}}}
		}, "topologies[0].blockName.nodeNameRegexp"},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		tt.edit(&cfg)
		err := cfg.Validate()
		var fe *config.FieldError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: Validate = %v, want an error naming %s", tt.name, err, tt.field)
		}
	}
}

// TestBlockNameInYAML names the blocks of a block topology of
// topology.yaml, and keeps the domain in the comment.
func TestBlockNameInYAML(t *testing.T) {
	t.Parallel()
	out := render(t, domainsGraph(t, map[string][]string{"B1": {"Node104", "Node105", "Node106"}, "B2": {"Node201", "Node202", "Node205"}}), func(c *Config) {
		c.Plugin, c.SlurmVersion = PluginYAML, "25.05"
		c.Topologies = []TopologyConfig{{Name: "topo", Plugin: KindBlock, ClusterDefault: true, BlockSizes: []int{3},
			BlockName: &BlockName{NodeNameRegexp: `^Node([0-9])[0-9]{2}$`, Format: `domain${1}`}}}
	})
	for _, want := range []string{"block: domain1", "block: domain2"} {
		if !strings.Contains(out, want) {
			t.Errorf("topology.yaml lacks %q:\n%s", want, out)
		}
	}
}
