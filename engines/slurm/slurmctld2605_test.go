package slurm

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/testenv/slurmtest"
	"github.com/toposcope/toposcope/topology"
)

// TestSlurmctld2605YAML loads topology.yaml into Slurm 26.05: a tree
// topology (the cluster default) and a block topology under the 25.05+
// rules (padding blocks, blocks smaller than the base), with a partition
// that names the block topology. `scontrol show topology` shows the tree
// the engine meant, `scontrol show topology block` the blocks it meant
// (the same as its topology/block file for 26.05), and `scontrol show
// partition` the partition's topology.
func TestSlurmctld2605YAML(t *testing.T) {
	slurmtest.Require(t, slurmtest.V2605)
	t.Parallel()
	graphs := map[string]func(testing.TB) *topology.Graph{
		"nvl72":           func(t testing.TB) *topology.Graph { return model(t, "nvl72") },
		"topograph-large": func(t testing.TB) *topology.Graph { return model(t, "topograph-large") },
		// Needs a padding block (25.05+) to keep aggregates inside switches.
		"three-and-three": func(t testing.TB) *topology.Graph { return build(t, threeAndThree()) },
	}
	for name, mk := range graphs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), slurmctldTimeout)
			defer cancel()
			g := mk(t)
			yamlCfg := func(c *Config) {
				c.Plugin, c.SlurmVersion = PluginYAML, "26.05"
				c.Topologies = []TopologyConfig{{Name: "tree", Plugin: KindTree, ClusterDefault: true}, {Name: "block", Plugin: KindBlock}}
			}
			doc := render(t, g, yamlCfg)
			nodes := nodeNames(g)
			c, err := slurmtest.Start(ctx, t, slurmtest.Options{Version: slurmtest.V2605, Plugin: slurmtest.PluginYAML, Nodes: nodes, Topology: doc,
				Partitions: []slurmtest.Partition{{Name: "gpu", Nodes: hostlist.Compress(nodes), Topology: "block"}}})
			if err != nil {
				t.Fatalf("slurmctld 26.05 refused topology.yaml:\n%s\n%v", doc, err)
			}
			tree := showTopology(ctx, t, c)
			sws, _, err := slurmtest.ParseTopology(tree)
			if err != nil {
				t.Fatal(err)
			}
			checkTreeFrom(t, g, newEngine(t, func(c *Config) { c.SlurmVersion = "26.05" }).Coverage(g), sws, true)

			blockOut := showTopology(ctx, t, c, "block")
			_, blocks, err := slurmtest.ParseTopology(blockOut)
			if err != nil {
				t.Fatal(err)
			}
			blockCfg := func(c *Config) { c.Plugin, c.SlurmVersion = PluginBlock, "26.05" }
			conf := render(t, g, blockCfg)
			checkBlocksOn(t, slurmtest.V2605, g, newEngine(t, blockCfg).Coverage(g), conf, blocks)

			argv := c.ScontrolArgv("show", "partition", "gpu")
			out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Topology=block") {
				t.Errorf("scontrol show partition gpu (%v):\n%s", err, out)
			}
		})
	}
}

func showTopology(ctx context.Context, t *testing.T, c *slurmtest.Controller, name ...string) string {
	t.Helper()
	out, err := c.ShowTopology(ctx, name...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
