package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/topology"
)

// withPartitions gives the nodes of the small-tree model Slurm
// partitions: gpu001-004 "gpu", gpu003-004 and gpu009-010 also "debug".
func withPartitions(t *testing.T) *topology.Graph {
	t.Helper()
	parts := map[string]map[string]string{}
	for _, n := range []string{"gpu001", "gpu002"} {
		parts[n] = map[string]string{topology.AttrSlurmPartitions: "gpu"}
	}
	for _, n := range []string{"gpu003", "gpu004"} {
		parts[n] = map[string]string{topology.AttrSlurmPartitions: "gpu,debug"}
	}
	for _, n := range []string{"gpu009", "gpu010"} {
		parts[n] = map[string]string{topology.AttrSlurmPartitions: "debug"}
	}
	return model(t, "small-tree").WithAttributes(parts)
}

func TestPartitionTopologies(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{KindTree, KindBlock} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			g := withPartitions(t)
			if kind == KindBlock {
				g = model(t, "nvl72").WithAttributes(map[string]map[string]string{
					model(t, "nvl72").Nodes()[0].Name: {topology.AttrSlurmPartitions: "gpu"},
				})
			}
			out := render(t, g, func(c *Config) { c.Plugin, c.SlurmVersion, c.PartitionTopologies = PluginYAML, "25.05", kind })
			doc := parseYAML(t, []byte(out))
			var got []string
			for _, tp := range doc {
				d := tp.Topology
				if tp.ClusterDefault {
					d += "*"
				}
				got = append(got, d)
			}
			want := "default* debug gpu"
			if kind == KindBlock {
				want = "default* block gpu"
			}
			if strings.Join(got, " ") != want {
				t.Fatalf("topologies = %v, want %s\n%s", got, want, out)
			}
			if kind == KindTree {
				gpu := doc[2].Tree
				if gpu == nil || len(gpu.Switches) == 0 {
					t.Fatalf("partition gpu has no tree:\n%s", out)
				}
				var nodes []string
				for _, s := range gpu.Switches {
					if s.Nodes != "" {
						nodes = append(nodes, s.Switch+"="+s.Nodes)
					}
				}
				if strings.Join(nodes, " ") != "leaf1=gpu[001-004]" {
					t.Errorf("partition gpu switches: %v\n%s", nodes, out)
				}
			}
		})
	}
}

func TestPartitionTopologiesErrors(t *testing.T) {
	t.Parallel()
	e := newEngine(t, func(c *Config) { c.Plugin, c.SlurmVersion, c.PartitionTopologies = PluginYAML, "25.05", KindTree })
	if _, err := e.Render(context.Background(), model(t, "small-tree")); !errors.Is(err, engines.ErrInexpressible) ||
		!strings.Contains(err.Error(), "slurm-nodes") {
		t.Errorf("no partitions: %v", err)
	}
	g := model(t, "small-tree").WithAttributes(map[string]map[string]string{"gpu001": {topology.AttrSlurmPartitions: "default"}})
	if _, err := e.Render(context.Background(), g); !errors.Is(err, engines.ErrInexpressible) || !strings.Contains(err.Error(), `partition "default"`) {
		t.Errorf("a partition named like a topology: %v", err)
	}
	g = model(t, "small-tree").WithAttributes(map[string]map[string]string{"gpu001": {topology.AttrSlurmPartitions: "gpu.a100"}})
	if _, err := e.Render(context.Background(), g); !errors.Is(err, engines.ErrInexpressible) || !strings.Contains(err.Error(), `partition "gpu.a100"`) {
		t.Errorf("a partition name that cannot name a topology: %v", err)
	}
	cfg := DefaultConfig()
	cfg.PartitionTopologies = "ring"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "partitionTopologies") {
		t.Errorf("bad kind: %v", err)
	}
}
