package slinky

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/slurm"
	"github.com/toposcope/toposcope/internal/config"
	goldenfile "github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got, *update)
}

func params(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}

func TestNodeSpecs(t *testing.T) {
	t.Parallel()
	f := kubetest.Fabric{Prefix: "p", Nodes: 40, NodesPerLeaf: 8, LeavesPerSpine: 2, DomainSize: 4, DomainNodes: 32}
	g := f.MustGraph(t)
	tests := []struct {
		name string
		edit func(*Config)
		want map[string]string // node index -> spec; "" = no annotation
	}{
		{name: "yaml defaults", want: map[string]string{"0": "default:p-core:p-spine01:p-leaf001,block:p-nvl001", "39": "default:p-core:p-spine03:p-leaf005"}},
		{name: "tree conf", edit: func(c *Config) { c.Slurm.Plugin = slurm.PluginTree },
			want: map[string]string{"0": "default:p-core:p-spine01:p-leaf001", "39": "default:p-core:p-spine03:p-leaf005"}},
		{name: "block conf", edit: func(c *Config) { c.Slurm.Plugin = slurm.PluginBlock },
			want: map[string]string{"0": "default:p-nvl001", "39": ""}},
		{name: "named topologies with a node filter", edit: func(c *Config) {
			c.Slurm.Topologies = []slurm.TopologyConfig{
				{Name: "fabric", Plugin: slurm.KindTree, ClusterDefault: true},
				{Name: "nvlink", Plugin: slurm.KindBlock, Nodes: "p-n[00005-00040]"},
				{Name: "flat", Plugin: slurm.KindFlat},
			}
		}, want: map[string]string{"0": "fabric:p-core:p-spine01:p-leaf001", "4": "fabric:p-core:p-spine01:p-leaf001,nvlink:p-nvl002"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := DefaultConfig()
			if tt.edit != nil {
				tt.edit(&c)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			specs, err := specsOf(g, c.topologies(g))
			if err != nil {
				t.Fatal(err)
			}
			for idx, want := range tt.want {
				name := f.NodeName(atoi(t, idx))
				if got := specs[name]; got != want {
					t.Errorf("%s: spec = %q, want %q", name, got, want)
				}
			}
		})
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestUnitsExistInFile checks that every unit a node annotation names is
// defined by the rendered topology file.
func TestUnitsExistInFile(t *testing.T) {
	t.Parallel()
	g := (kubetest.Fabric{Prefix: "q", Nodes: 72, NodesPerLeaf: 18, DomainSize: 18, SubDomainSize: 9}).MustGraph(t)
	e, err := New(withMode(DefaultConfig(), kube.ModePrint), nil, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := e.slurm.Render(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := e.nodeSpecs(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	for node, spec := range specs {
		for _, part := range strings.Split(spec, ",") {
			units := strings.Split(part, ":")[1:]
			for _, u := range units {
				if !bytes.Contains(doc, []byte(u)) {
					t.Fatalf("node %s: unit %q of %q is not in topology.yaml:\n%s", node, u, spec, doc)
				}
			}
		}
	}
}

func withMode(c Config, mode string) Config { c.Mode = mode; return c }

func TestRender(t *testing.T) {
	t.Parallel()
	g := (kubetest.Fabric{Prefix: "r", Nodes: 8, NodesPerLeaf: 4, LeavesPerSpine: 2, DomainSize: 4}).MustGraph(t)
	for _, tt := range []struct{ name, params string }{
		{"yaml", "mode: print\n"},
		{"tree", "mode: print\nnodeAnnotations: false\nslurm: {plugin: topology/tree, slurmVersion: '24.11'}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			e, err := NewFactory().New(params(t, tt.params), "params", engines.Deps{Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Publish(context.Background(), g); err != nil {
				t.Fatal(err)
			}
			golden(t, "render-"+tt.name+".yaml", out.Bytes())
		})
	}
}

// TestSkeleton: skeleton-only keeps every switch and block of the file
// and drops its node lists and comments, in both formats; none renders
// only the node annotations.
func TestSkeleton(t *testing.T) {
	t.Parallel()
	g := (kubetest.Fabric{Prefix: "s", Nodes: 8, NodesPerLeaf: 4, LeavesPerSpine: 2, DomainSize: 4}).MustGraph(t)
	for _, tt := range []struct {
		name, params string
		want         []string
	}{
		{"yaml", "mode: print\nconfigUpdateMode: skeleton-only\n",
			[]string{"- switch: s-leaf001\n", "children: s-leaf[001-002]", "- block: s-nvl002\n", "block_sizes: [4, 8]"}},
		{"tree", "mode: print\nconfigUpdateMode: skeleton-only\nslurm: {plugin: topology/tree, slurmVersion: '25.11'}\n",
			[]string{"SwitchName=s-leaf001\n", "SwitchName=s-spine01 Switches=s-leaf[001-002]\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := NewFactory().New(params(t, tt.params), "params", engines.Deps{})
			if err != nil {
				t.Fatal(err)
			}
			data, err := e.(*Engine).fileData(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			doc := string(data)
			if strings.Contains(doc, "nodes") || strings.Contains(doc, "Nodes=") || strings.Contains(doc, "#") {
				t.Errorf("skeleton keeps nodes or comments:\n%s", doc)
			}
			for _, w := range tt.want {
				if !strings.Contains(doc, w) {
					t.Errorf("skeleton lacks %q:\n%s", w, doc)
				}
			}
			var parsed any
			if err := yaml.Unmarshal(data, &parsed); tt.name == "yaml" && err != nil {
				t.Errorf("skeleton is not YAML: %v", err)
			}
		})
	}
	e, err := NewFactory().New(params(t, "mode: print\nconfigUpdateMode: none\n"), "params", engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.(*Engine).Render(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "ConfigMap") || !strings.Contains(string(out), AnnotationSpec) {
		t.Errorf("none renders:\n%s", out)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, params, field string }{
		{"operator-owned ConfigMap", "mode: print\nconfigMap: slurm-config", "params.configMap"},
		{"unknown update mode", "mode: print\nconfigUpdateMode: partial", "params.configUpdateMode"},
		{"skeleton without annotations", "mode: print\nconfigUpdateMode: skeleton-only\nnodeAnnotations: false", "params.configUpdateMode"},
		{"operator-owned, other controller", "mode: print\ncontroller: c1\nconfigMap: c1-config", "params.configMap"},
		{"output", "mode: print\nslurm: {output: /etc/slurm/topology.conf}", "params.slurm.output"},
		{"reconfigure", "mode: print\nslurm: {reconfigure: true}", "params.slurm.reconfigure"},
		{"slurm plugin", "mode: print\nslurm: {plugin: topology/nope}", "params.slurm.plugin"},
		{"unknown slurm key", "mode: print\nslurm: {nope: 1}", "params.slurm.nope"},
		{"annotations need 25.11", "mode: print\nslurm: {plugin: topology/tree, slurmVersion: '24.11'}", "params.nodeAnnotations"},
		{"namespace", "mode: print\nnamespace: Not_A_Namespace", "params.namespace"},
		{"empty pod selector", "mode: print\npodSelector: ''", "params.podSelector"},
		{"bad pod selector", "mode: print\npodSelector: 'app in (a'", "params.podSelector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewFactory().New(params(t, tt.params), "params", engines.Deps{})
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Errorf("New = %v, want a field error on %s", err, tt.field)
			}
		})
	}
	c := DefaultConfig()
	if c.Key() != "topology.yaml" {
		t.Errorf("Key = %s", c.Key())
	}
	c.Slurm.Plugin = slurm.PluginBlock
	if c.Key() != "topology.conf" {
		t.Errorf("Key = %s", c.Key())
	}
}

func TestUnsafeUnitName(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	c.Slurm.Topologies = []slurm.TopologyConfig{{Name: "fabric", Plugin: slurm.KindTree, ClusterDefault: true}}
	g := (kubetest.Fabric{Prefix: "u", Nodes: 2}).MustGraph(t)
	specs, err := specsOf(g, c.topologies(g))
	if err != nil {
		t.Fatal(err)
	}
	if got := specs; !maps.Equal(got, map[string]string{"u-n00001": "fabric:u-core:u-spine01:u-leaf001", "u-n00002": "fabric:u-core:u-spine01:u-leaf001"}) {
		t.Errorf("specs = %v", got)
	}
	if err := checkUnit("a:b", "switch"); !errors.Is(err, engines.ErrInexpressible) {
		t.Errorf("checkUnit(a:b) = %v", err)
	}
}
