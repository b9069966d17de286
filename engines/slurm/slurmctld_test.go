package slurm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/testenv/slurmtest"
	"github.com/toposcope/toposcope/topology"
)

// These tests start the real slurmctld (22.05 on the host, 24.11 in the
// chroot that hack/install-slurm.sh builds) with what the engine writes and
// check, through `scontrol show topology`, that Slurm accepts the file and
// reads it as the engine meant. slurmtest.Require skips them outside CI
// when Slurm is missing and fails them when CI=true.

const slurmctldTimeout = 2 * time.Minute

// nodeNames lists every node of g, for slurm.conf.
func nodeNames(g *topology.Graph) []string {
	names := make([]string, 0, len(g.Nodes()))
	for _, n := range g.Nodes() {
		names = append(names, n.Name)
	}
	return names
}

// sameSet reports whether two hostlists name the same nodes.
func sameSet(t testing.TB, a, b string) bool {
	t.Helper()
	x, y := expand(t, a), expand(t, b)
	hostlist.Sort(x)
	hostlist.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

// wantSwitch is what `scontrol show topology` should print for a switch.
type wantSwitch struct {
	level, speed    int
	nodes, children []string
}

// expectedTree computes, from the graph alone, the switches Slurm before
// 25.05 should report: every switch with a node below it, its level (0 for
// a leaf, else one more than its highest kept child), the union of the
// nodes below it and its kept children.
func expectedTree(g *topology.Graph) map[string]wantSwitch {
	want := map[string]wantSwitch{}
	var visit func(id string) (wantSwitch, bool)
	visit = func(id string) (wantSwitch, bool) {
		s, _ := g.Switch(id)
		w := wantSwitch{speed: max(int(s.LinkSpeedGbps), 1), nodes: slices.Clone(s.Nodes)}
		for _, c := range s.Children {
			cw, ok := visit(c)
			if !ok {
				continue
			}
			cs, _ := g.Switch(c)
			w.children = append(w.children, cs.Name)
			w.nodes = append(w.nodes, cw.nodes...)
			w.level = max(w.level, cw.level+1)
		}
		if len(w.nodes) == 0 {
			return w, false
		}
		want[s.Name] = w
		return w, true
	}
	for _, r := range g.Roots() {
		visit(r.ID)
	}
	return want
}

// startWith renders g, starts slurmctld with the file and returns the
// controller and the output of `scontrol show topology`.
func startWith(ctx context.Context, t *testing.T, v slurmtest.Version, plugin string, g *topology.Graph, conf string) (*slurmtest.Controller, []slurmtest.Switch, []slurmtest.Block) {
	t.Helper()
	c, err := slurmtest.Start(ctx, t, slurmtest.Options{Version: v, Plugin: plugin, Nodes: nodeNames(g), Topology: conf})
	if err != nil {
		t.Fatalf("slurmctld %s refused the file:\n%s\n%v", v, conf, err)
	}
	out, err := c.ShowTopology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sws, blocks, err := slurmtest.ParseTopology(out)
	if err != nil {
		t.Fatal(err)
	}
	return c, sws, blocks
}

// checkTree compares Slurm's view of a tree with the graph.
func checkTree(t *testing.T, g *topology.Graph, cov engines.Coverage, got []slurmtest.Switch) {
	t.Helper()
	checkTreeFrom(t, g, cov, got, false)
}

// checkTreeFrom is checkTree; fromYAML says the tree came from
// topology.yaml, which cannot carry link speeds (Slurm's parser skips
// link_speed): slurmctld then reports LinkSpeed=0 for every switch.
func checkTreeFrom(t *testing.T, g *topology.Graph, cov engines.Coverage, got []slurmtest.Switch, fromYAML bool) {
	t.Helper()
	want := expectedTree(g)
	if fromYAML {
		for k, w := range want {
			w.speed = 0
			want[k] = w
		}
	}
	if un := g.NodesWithoutSwitch(); len(un) > 0 && len(cov.Uncovered) == 0 {
		// The engine's unplacedSwitch holds them, a root of its own.
		want[DefaultUnplacedSwitch] = wantSwitch{speed: 1, nodes: un}
		if fromYAML {
			want[DefaultUnplacedSwitch] = wantSwitch{nodes: un}
		}
	}
	seen := map[string]bool{}
	covered := map[string]bool{}
	for _, s := range got {
		w, ok := want[s.Name]
		if !ok {
			t.Errorf("slurmctld reports switch %s, which should not be there", s.Name)
			continue
		}
		seen[s.Name] = true
		if s.Level != w.level || s.LinkSpeed != w.speed {
			t.Errorf("switch %s: Level=%d LinkSpeed=%d, want %d and %d", s.Name, s.Level, s.LinkSpeed, w.level, w.speed)
		}
		if !sameSet(t, s.Nodes, hostlist.Compress(w.nodes)) {
			t.Errorf("switch %s: Nodes=%s, want %s", s.Name, s.Nodes, hostlist.Compress(w.nodes))
		}
		if !sameSet(t, s.Switches, hostlist.Compress(w.children)) {
			t.Errorf("switch %s: Switches=%s, want %s", s.Name, s.Switches, hostlist.Compress(w.children))
		}
		if s.Level == 0 {
			for _, n := range expand(t, s.Nodes) {
				covered[n] = true
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("switch %s is missing from scontrol show topology", name)
		}
	}
	var outside []string
	for _, n := range g.Nodes() {
		if !covered[n.Name] {
			outside = append(outside, n.Name)
		}
	}
	if !slices.Equal(outside, cov.Uncovered) {
		t.Errorf("nodes outside the tree %v, Coverage says %v", outside, cov.Uncovered)
	}
}

func TestSlurmctldTree(t *testing.T) {
	slurmtest.Require(t, slurmtest.V2205)
	t.Parallel()
	graphs := map[string]func(testing.TB) *topology.Graph{}
	for _, m := range bundledModels() {
		graphs[m] = func(t testing.TB) *topology.Graph { return model(t, m) }
	}
	for _, seed := range []uint64{3, 6, 7, 8, 29} {
		graphs[fmt.Sprintf("random-%d", seed)] = func(t testing.TB) *topology.Graph {
			return randomGraph(t, seed, randomOptions{emptyLeaves: true})
		}
	}
	for name, mk := range graphs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), slurmctldTimeout)
			defer cancel()
			g := mk(t)
			e := newEngine(t, version("22.05"))
			conf := render(t, g, version("22.05"))
			_, got, _ := startWith(ctx, t, slurmtest.V2205, slurmtest.PluginTree, g, conf)
			checkTree(t, g, e.Coverage(g), got)
		})
	}
}

// blockCase is a graph for the topology/block checks on Slurm 24.11.
type blockCase struct {
	graph func(testing.TB) *topology.Graph
	edit  func(*Config)
	// check runs extra checks on the rendered file.
	check func(t *testing.T, g *topology.Graph, conf string)
}

func TestSlurmctldBlock(t *testing.T) {
	slurmtest.Require(t, slurmtest.V2411)
	t.Parallel()
	cases := map[string]blockCase{
		"nvl72": {graph: func(t testing.TB) *topology.Graph { return model(t, "nvl72") }},
		"mixed": {graph: func(t testing.TB) *topology.Graph { return model(t, "mixed") }},
		// 17 racks, the last one partial: with no blockSizes configured the
		// base is the smallest rack, so that 24.11 keeps every rack (the
		// full ones are larger blocks, which it takes whole).
		"nvl72-300": {graph: func(t testing.TB) *topology.Graph {
			return generated(t, sim.GenerateOptions{Shape: sim.ShapeNVL72, Nodes: 300})
		}, check: func(t *testing.T, g *topology.Graph, conf string) {
			if !strings.Contains(conf, "BlockSizes=12,") || !strings.Contains(body(conf), "Nodes=gb[289-300]") {
				t.Errorf("partial rack left out:\n%s", conf)
			}
		}},
		// Domains that straddle leaves and spines.
		"fat-tree-1000": {graph: func(t testing.TB) *topology.Graph {
			return generated(t, sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: 1000, DomainSize: 18})
		}},
		// Would need a padding block from 25.05 on; 24.11 gets fewer sizes instead.
		"three-and-three": {graph: func(t testing.TB) *topology.Graph { return build(t, threeAndThree()) },
			check: func(t *testing.T, g *topology.Graph, conf string) {
				padded := render(t, g, func(c *Config) { c.Plugin, c.SlurmVersion = PluginBlock, "25.05" })
				if !strings.Contains(padded, "BlockName=spineA-pad1\n") || !strings.Contains(conf, "BlockSizes=4,32\n") {
					t.Errorf("25.05 output should pad and 24.11 drop sizes 8 and 16:\n%s\n%s", padded, conf)
				}
				_, err := newEngine(t, func(c *Config) { c.Plugin, c.BlockSizes = PluginBlock, []int{4, 8} }).Render(context.Background(), g)
				if !errors.Is(err, engines.ErrInexpressible) {
					t.Errorf("BlockSizes=4,8 on 24.11 = %v, want ErrInexpressible", err)
				}
			}},
		// A domain bigger than the base size is written whole.
		"big-domain": {graph: func(t testing.TB) *topology.Graph {
			return build(t, spec{
				links:   []string{"s>l1", "s>l2", "s>l3"},
				leaves:  map[string]string{"l1": "n[1-8]", "l2": "n[9-14]", "l3": "n[15-18]"},
				domains: map[string]string{"d1": "n[1-4]", "d2": "n[5-8]", "d3": "n[9-14]", "d4": "n[15-18]"},
			})
		}, check: func(t *testing.T, g *topology.Graph, conf string) {
			if !strings.Contains(conf, "BlockName=d3 Nodes=n[9-14]\n") {
				t.Errorf("big domain not written whole:\n%s", conf)
			}
		}},
		"configured-sizes": {graph: func(t testing.TB) *topology.Graph { return model(t, "nvl72") },
			edit: func(c *Config) { c.BlockSizes = []int{18, 72} }},
		// Topograph's CI request (tests/ci/values.slinky-dra-block.yaml):
		// blocks named by the rack digits of their nodes' names.
		"topograph-blockName": {graph: func(t testing.TB) *topology.Graph { return model(t, "topograph-large") },
			edit: func(c *Config) {
				c.BlockSizes, c.BlockName = []int{8, 16, 32}, &BlockName{NodeNameRegexp: `^([0-9]{2})`, Format: `rack${1}`}
			},
			check: func(t *testing.T, g *topology.Graph, conf string) {
				if !strings.Contains(conf, "BlockName=rack11 Nodes=[1101-1108]\n") || !strings.Contains(conf, "BlockName=rack62 Nodes=[6201-6208]\n") {
					t.Errorf("blocks not named by rack:\n%s", conf)
				}
			}},
		"random-3": {graph: func(t testing.TB) *topology.Graph { return randomGraph(t, 3, randomOptions{domainSize: 3}) }},
		"random-8": {graph: func(t testing.TB) *topology.Graph { return randomGraph(t, 8, randomOptions{domainSize: 4}) }},
	}
	for name, bc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), slurmctldTimeout)
			defer cancel()
			g := bc.graph(t)
			edit := func(c *Config) {
				c.Plugin = PluginBlock
				if bc.edit != nil {
					bc.edit(c)
				}
			}
			conf := render(t, g, edit)
			if bc.check != nil {
				bc.check(t, g, conf)
			}
			_, _, got := startWith(ctx, t, slurmtest.V2411, slurmtest.PluginBlock, g, conf)
			checkBlocks(t, g, newEngine(t, edit).Coverage(g), conf, got)
		})
	}
}

// checkBlocks compares Slurm's view of a block file with the file and the
// graph: base blocks in file order with their nodes and the base size;
// aggregates as block_record.c builds them (slurmAggregates), none taking
// part of a switch together with blocks outside it; nodes outside every
// block exactly the engine's Coverage.
func checkBlocks(t *testing.T, g *topology.Graph, cov engines.Coverage, conf string, got []slurmtest.Block) {
	t.Helper()
	checkBlocksOn(t, slurmtest.V2411, g, cov, conf, got)
}

// checkBlocksOn is checkBlocks for Slurm version v's rules.
func checkBlocksOn(t *testing.T, v slurmtest.Version, g *topology.Graph, cov engines.Coverage, conf string, got []slurmtest.Block) {
	t.Helper()
	blocks, sz, _ := parseBlockConf(t, conf)
	index := map[string]int{}
	var aggs []slurmtest.Block
	covered := map[string]bool{}
	for _, b := range got {
		if b.Aggregated {
			aggs = append(aggs, b)
			continue
		}
		i := b.Index
		if i >= len(blocks) || blocks[i].name != b.Name {
			t.Fatalf("slurmctld block %d is %s; the file has %v", i, b.Name, blocks)
		}
		if b.Size != sz[0] || !sameSet(t, b.Nodes, hostlist.Compress(blocks[i].nodes)) {
			t.Errorf("block %s: BlockSize=%d Nodes=%s, want %d and %s", b.Name, b.Size, b.Nodes, sz[0], hostlist.Compress(blocks[i].nodes))
		}
		index[b.Name] = i
		for _, n := range blocks[i].nodes {
			covered[n] = true
		}
	}
	if len(index) != len(blocks) {
		t.Fatalf("slurmctld reports %d base blocks, the file has %d", len(index), len(blocks))
	}
	mults := make([]int, len(sz))
	for i, s := range sz {
		mults[i] = s / sz[0]
	}
	var want, have []string
	var spans []aggregate
	for _, a := range slurmAggregates(len(blocks), mults) {
		want = append(want, fmt.Sprintf("%d:[%d,%d)", a.mult*sz[0], a.start, a.end))
	}
	for _, a := range aggs {
		var members []int
		var nodes []string
		for _, name := range expand(t, a.Name) {
			members = append(members, index[name])
			nodes = append(nodes, blocks[index[name]].nodes...)
		}
		slices.Sort(members)
		if members[len(members)-1]-members[0] != len(members)-1 {
			t.Errorf("aggregate %s is not a run of consecutive blocks: %v", a.Name, members)
		}
		if !sameSet(t, a.Nodes, hostlist.Compress(nodes)) {
			t.Errorf("aggregate %s: Nodes=%s, want %s", a.Name, a.Nodes, hostlist.Compress(nodes))
		}
		have = append(have, fmt.Sprintf("%d:[%d,%d)", a.Size, members[0], members[len(members)-1]+1))
		spans = append(spans, aggregate{mult: a.Size / sz[0], start: members[0], end: members[len(members)-1] + 1})
	}
	slices.Sort(want)
	slices.Sort(have)
	if !slices.Equal(want, have) {
		t.Errorf("aggregates %v, want %v", have, want)
	}
	checkLaminar(t, g, blocks, spans)
	checkFabricBlocks(t, g, blocks, sz, string(v))
	var outside []string
	for _, n := range g.Nodes() {
		if !covered[n.Name] {
			outside = append(outside, n.Name)
		}
	}
	if !slices.Equal(outside, cov.Uncovered) {
		t.Errorf("nodes outside every block %v, Coverage says %v", outside, cov.Uncovered)
	}
}

func TestSlurmctldPublishReconfigure(t *testing.T) {
	slurmtest.Require(t, slurmtest.V2205)
	slurmtest.Require(t, slurmtest.V2411)
	t.Parallel()
	// The same nodes, re-cabled: 2 leaves under a spine become 4 leaves under
	// 2 spines and a core; 8 racks of 18 become 4 domains of 36.
	tests := []struct {
		name          string
		version       slurmtest.Version
		plugin        string
		before, after func(testing.TB) *topology.Graph
	}{
		{"tree 22.05", slurmtest.V2205, PluginTree,
			func(t testing.TB) *topology.Graph { return model(t, "small-tree") },
			func(t testing.TB) *topology.Graph {
				return build(t, spec{
					links:  []string{"core>spine-a", "core>spine-b", "spine-a>leaf-1", "spine-a>leaf-2", "spine-b>leaf-3", "spine-b>leaf-4"},
					leaves: map[string]string{"leaf-1": "gpu[001-004]", "leaf-2": "gpu[005-008]", "leaf-3": "gpu[009-012]", "leaf-4": "gpu[013-016]"},
				})
			}},
		{"block 24.11", slurmtest.V2411, PluginBlock,
			func(t testing.TB) *topology.Graph { return model(t, "nvl72") },
			func(t testing.TB) *topology.Graph {
				return build(t, spec{
					links:   []string{"spine>leaf1", "spine>leaf2"},
					leaves:  map[string]string{"leaf1": "gb[001-072]", "leaf2": "gb[073-144]"},
					domains: map[string]string{"nvl144-1": "gb[001-036]", "nvl144-2": "gb[037-072]", "nvl144-3": "gb[073-108]", "nvl144-4": "gb[109-144]"},
				})
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), slurmctldTimeout)
			defer cancel()
			v := string(tt.version)
			before, after := tt.before(t), tt.after(t)
			c, _, _ := startWith(ctx, t, tt.version, tt.plugin, before,
				render(t, before, func(c *Config) { c.Plugin, c.SlurmVersion = tt.plugin, v }))
			e := newEngine(t, func(cfg *Config) {
				cfg.Plugin, cfg.SlurmVersion = tt.plugin, v
				cfg.Output, cfg.Reconfigure = c.TopologyPath(), true
				cfg.ReconfigureCommand = c.ScontrolArgv("reconfigure")
			})
			if err := e.Publish(ctx, after); err != nil {
				t.Fatalf("Publish: %v\n%s", err, c.Log())
			}
			// 24.11 re-executes itself on reconfigure: wait for the new topology.
			wantConf := render(t, after, func(cfg *Config) { cfg.Plugin, cfg.SlurmVersion = tt.plugin, v })
			for {
				out, err := c.ShowTopology(ctx)
				if err == nil {
					sws, blocks, perr := slurmtest.ParseTopology(out)
					if perr != nil {
						t.Fatal(perr)
					}
					if tt.plugin == PluginTree && len(sws) == 7 {
						checkTree(t, after, e.Coverage(after), sws)
						return
					}
					if tt.plugin == PluginBlock && len(blocks) > 0 && blocks[0].Name == "nvl144-1" {
						checkBlocks(t, after, e.Coverage(after), wantConf, blocks)
						return
					}
				}
				select {
				case <-ctx.Done():
					t.Fatalf("slurmctld never showed the new topology (last error %v)\n%s", err, c.Log())
				case <-time.After(200 * time.Millisecond):
				}
			}
		})
	}
}
