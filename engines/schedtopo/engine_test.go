package schedtopo_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/schedtopo"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/keys"
	goldenfile "github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/topology"
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

func printEngine(t *testing.T, s schedtopo.Scheduler, edit func(*schedtopo.Config)) *schedtopo.Engine {
	t.Helper()
	cfg := schedtopo.DefaultConfig(s)
	cfg.Mode = kube.ModePrint
	if edit != nil {
		edit(&cfg)
	}
	e, err := schedtopo.New(cfg, nil, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestLevels(t *testing.T) {
	t.Parallel()
	const p = "topology.toposcope.io/"
	tests := []struct {
		name     string
		fabric   kubetest.Fabric
		edit     func(*schedtopo.Config)
		want     []string
		warn     bool
		inexpres bool
	}{
		{name: "3 tiers", fabric: kubetest.Fabric{Nodes: 32}, want: []string{p + "tier-2", p + "tier-1", p + "tier-0", keys.Hostname}},
		{name: "1 tier", fabric: kubetest.Fabric{Nodes: 32, Tiers: 1}, want: []string{p + "tier-0", keys.Hostname}},
		{name: "topograph", fabric: kubetest.Fabric{Nodes: 32, Tiers: 2}, edit: func(c *schedtopo.Config) { c.Preset = kube.PresetTopographV1 },
			want: []string{"fabric.topograph.run/tier-1", "fabric.topograph.run/tier-0", keys.Hostname}},
		{name: "custom tiers cut the depth", fabric: kubetest.Fabric{Nodes: 32}, edit: func(c *schedtopo.Config) { c.TierLabels = []string{"x.io/leaf", "x.io/spine"} },
			want: []string{"x.io/spine", "x.io/leaf", keys.Hostname}},
		{name: "accelerator below tiers", fabric: kubetest.Fabric{Nodes: 32, DomainSize: 8, SubDomainSize: 4},
			edit: func(c *schedtopo.Config) { c.AcceleratorLevels = true },
			want: []string{p + "tier-2", p + "tier-1", p + "tier-0", p + "accelerator-domain", p + "accelerator-subdomain", keys.Hostname}},
		{name: "domains across leaves", fabric: kubetest.Fabric{Nodes: 32, NodesPerLeaf: 4, DomainSize: 8},
			edit: func(c *schedtopo.Config) { c.AcceleratorLevels = true },
			want: []string{p + "tier-2", p + "tier-1", p + "tier-0", p + "accelerator-domain", keys.Hostname}, warn: true},
		{name: "accelerator only", fabric: kubetest.Fabric{Nodes: 32, DomainSize: 8},
			edit: func(c *schedtopo.Config) { c.AcceleratorLevels, c.FabricLevels = true, false },
			want: []string{p + "accelerator-domain", keys.Hostname}},
		{name: "nothing to publish", fabric: kubetest.Fabric{Nodes: 32},
			edit: func(c *schedtopo.Config) { c.AcceleratorLevels, c.FabricLevels = true, false }, inexpres: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fabric.Prefix = "l"
			e := printEngine(t, schedtopo.Kueue, tt.edit)
			got, warnings, err := e.Levels(tt.fabric.MustGraph(t))
			if tt.inexpres {
				if !errors.Is(err, engines.ErrInexpressible) {
					t.Fatalf("Levels = %v, want ErrInexpressible", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("levels = %v\nwant     %v", got, tt.want)
			}
			if (len(warnings) > 0) != tt.warn {
				t.Errorf("warnings = %v", warnings)
			}
		})
	}
}

func TestTooManyLevels(t *testing.T) {
	t.Parallel()
	b := topology.NewBuilder()
	b.AddNode(topology.Node{Name: "n"})
	var path []topology.SwitchInfo
	for i := range 16 {
		path = append(path, topology.SwitchInfo{ID: "s" + string(rune('a'+i))})
	}
	b.AddPath("n", path)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := printEngine(t, schedtopo.KAI, nil).Levels(g); !errors.Is(err, engines.ErrInexpressible) || !strings.Contains(err.Error(), "17 levels") {
		t.Errorf("Levels = %v", err)
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	g := (kubetest.Fabric{Prefix: "r", Nodes: 16}).MustGraph(t)
	for _, f := range []engines.Factory{schedtopo.NewKueueFactory(), schedtopo.NewKAIFactory()} {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			e, err := f.New(params(t, f.Example), "params", engines.Deps{Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Publish(context.Background(), g); err != nil {
				t.Fatal(err)
			}
			golden(t, "render-"+f.Name+".yaml", out.Bytes())
		})
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f             engines.Factory
		params, field string
	}{
		{schedtopo.NewKueueFactory(), "mode: print\napiVersion: v1alpha1", "params.apiVersion"},
		{schedtopo.NewKAIFactory(), "mode: print\napiVersion: v1beta2", "params.apiVersion"},
		{schedtopo.NewKueueFactory(), "mode: print\nname: Not_Valid", "params.name"},
		{schedtopo.NewKueueFactory(), "mode: print\nfabricLevels: false", "params.fabricLevels"},
		{schedtopo.NewKueueFactory(), "mode: print\nacceleratorLevels: true\ndomainLabel: '-'", "params.acceleratorLevels"},
		{schedtopo.NewKAIFactory(), "mode: print\ntierLabels: [kubernetes.io/hostname]", "params.tierLabels[0]"},
		{schedtopo.NewKAIFactory(), "mode: print\nmanageFlavors: true", "params.manageFlavors"},
	}
	for _, tt := range tests {
		t.Run(tt.f.Name+" "+tt.field, func(t *testing.T) {
			t.Parallel()
			_, err := tt.f.New(params(t, tt.params), "params", engines.Deps{})
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Errorf("New = %v, want a field error on %s", err, tt.field)
			}
		})
	}
	var zero schedtopo.Config
	if err := zero.Validate(); err == nil {
		t.Error("a Config not made by DefaultConfig validated")
	}
}
