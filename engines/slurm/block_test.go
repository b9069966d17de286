package slurm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/topology"
)

// confBlock is one BlockName line of a rendered file.
type confBlock struct {
	name  string
	nodes []string // nil for an empty block
}

// parseBlockConf reads rendered topology/block lines back.
func parseBlockConf(t testing.TB, out string) (blocks []confBlock, sizes []int, levels string) {
	t.Helper()
	for _, line := range strings.Split(body(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case strings.HasPrefix(f[0], "BlockName="):
			b := confBlock{name: strings.TrimPrefix(f[0], "BlockName=")}
			if len(f) > 1 {
				b.nodes = expand(t, strings.TrimPrefix(f[1], "Nodes="))
			}
			blocks = append(blocks, b)
		case strings.HasPrefix(f[0], "BlockSizes="):
			for _, s := range strings.Split(strings.TrimPrefix(f[0], "BlockSizes="), ",") {
				n, err := strconv.Atoi(s)
				if err != nil {
					t.Fatalf("bad BlockSizes in %q", line)
				}
				sizes = append(sizes, n)
			}
		case strings.HasPrefix(f[0], "BlockLevels="):
			levels = strings.TrimPrefix(f[0], "BlockLevels=")
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	return blocks, sizes, levels
}

// threeAndThree is 3 domains under one spine and 3 under another: with
// aggregates of 2, the third and fourth block sit under different spines.
func threeAndThree() spec {
	return spec{
		links: []string{"core>spineA", "core>spineB", "spineA>leafA1", "spineA>leafA2", "spineA>leafA3",
			"spineB>leafB1", "spineB>leafB2", "spineB>leafB3"},
		leaves: map[string]string{"leafA1": "n[01-04]", "leafA2": "n[05-08]", "leafA3": "n[09-12]",
			"leafB1": "n[13-16]", "leafB2": "n[17-20]", "leafB3": "n[21-24]"},
		domains: map[string]string{"dA1": "n[01-04]", "dA2": "n[05-08]", "dA3": "n[09-12]",
			"dB1": "n[13-16]", "dB2": "n[17-20]", "dB3": "n[21-24]"},
	}
}

func TestSlurmAggregates(t *testing.T) {
	t.Parallel()
	// The expectations are what slurmctld 24.11.5 printed with
	// `scontrol show topology` for these files (see docs/slurm.md).
	tests := []struct {
		name  string
		n     int
		mults []int
		want  string
	}{
		{"7 blocks, BlockSizes=4,8,16", 7, []int{1, 2, 4}, "2:[0,2) 2:[2,4) 2:[4,6) 4:[0,4) 4:[4,7)"},
		{"5 blocks, BlockSizes=4,8,16,32,64", 5, []int{1, 2, 4, 8, 16}, "2:[0,2) 2:[2,4) 4:[0,4) 8:[0,5)"},
		{"4 blocks, BlockSizes=18,36,72", 4, []int{1, 2, 4}, "2:[0,2) 2:[2,4) 4:[0,4)"},
		{"6 blocks, 1 and 4", 6, []int{1, 4}, "4:[0,4) 4:[4,6)"},
		{"6 blocks, 1, 2 and 4", 6, []int{1, 2, 4}, "2:[0,2) 2:[2,4) 2:[4,6) 4:[0,4)"},
		{"1 block", 1, []int{1, 2}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, a := range slurmAggregates(tt.n, tt.mults) {
				got = append(got, fmt.Sprintf("%d:[%d,%d)", a.mult, a.start, a.end))
			}
			if s := strings.Join(got, " "); s != tt.want {
				t.Errorf("slurmAggregates(%d, %v) = %q, want %q", tt.n, tt.mults, s, tt.want)
			}
		})
	}
}

func TestRenderBlock(t *testing.T) {
	t.Parallel()
	// d1 and d2 (4 nodes) set the base; d3 is bigger, d4 smaller.
	small := spec{
		links:   []string{"s>l1", "s>l2", "s>l3"},
		leaves:  map[string]string{"l1": "n[1-8]", "l2": "n[9-14]", "l3": "n[15-17]"},
		domains: map[string]string{"d1": "n[1-4]", "d2": "n[5-8]", "d3": "n[9-14]", "d4": "n[15-17]"},
		loose:   "cpu1",
	}
	tests := []struct {
		name    string
		spec    spec
		edit    func(*Config)
		want    string   // exact body without comments
		wantErr []string // substrings; the error must wrap ErrInexpressible
	}{
		{name: "23.11 keeps only levels that follow the switches", spec: threeAndThree(), edit: version("23.11"),
			want: "BlockName=dA1 Nodes=n[01-04]\nBlockName=dA2 Nodes=n[05-08]\nBlockName=dA3 Nodes=n[09-12]\n" +
				"BlockName=dB1 Nodes=n[13-16]\nBlockName=dB2 Nodes=n[17-20]\nBlockName=dB3 Nodes=n[21-24]\nBlockLevels=0,3,4\n"},
		{name: "24.11 drops the sizes that would cross a spine", spec: threeAndThree(), edit: version("24.11"),
			want: "BlockName=dA1 Nodes=n[01-04]\nBlockName=dA2 Nodes=n[05-08]\nBlockName=dA3 Nodes=n[09-12]\n" +
				"BlockName=dB1 Nodes=n[13-16]\nBlockName=dB2 Nodes=n[17-20]\nBlockName=dB3 Nodes=n[21-24]\nBlockSizes=4,32\n"},
		{name: "25.05 pads so that spines do not share an aggregate", spec: threeAndThree(), edit: version("25.05"),
			want: "BlockName=dA1 Nodes=n[01-04]\nBlockName=dA2 Nodes=n[05-08]\nBlockName=dA3 Nodes=n[09-12]\nBlockName=spineA-pad1\n" +
				"BlockName=dB1 Nodes=n[13-16]\nBlockName=dB2 Nodes=n[17-20]\nBlockName=dB3 Nodes=n[21-24]\nBlockSizes=4,8,16,32\n"},
		{name: "configured size that needs padding on 24.11", spec: threeAndThree(), edit: sizes("24.11", 4, 8),
			wantErr: []string{"block size 8", "dA3..dB1", `switch "spineA"`, "Slurm 24.11 cannot pad", "25.05"}},
		{name: "configured sizes are padded on 25.05", spec: threeAndThree(), edit: sizes("25.05", 4, 16),
			want: "BlockName=dA1 Nodes=n[01-04]\nBlockName=dA2 Nodes=n[05-08]\nBlockName=dA3 Nodes=n[09-12]\nBlockName=spineA-pad1\n" +
				"BlockName=dB1 Nodes=n[13-16]\nBlockName=dB2 Nodes=n[17-20]\nBlockName=dB3 Nodes=n[21-24]\nBlockSizes=4,16\n"},
		{name: "inferred base on 24.11 is the smallest domain: every block kept, bigger ones whole", spec: small, edit: version("24.11"),
			want: "BlockName=d1 Nodes=n[1-4]\nBlockName=d2 Nodes=n[5-8]\nBlockName=d3 Nodes=n[9-14]\nBlockName=d4 Nodes=n[15-17]\nBlockSizes=3,6,12\n"},
		{name: "configured base: a smaller block is an error on request", spec: small, edit: func(c *Config) { sizes("24.11", 4)(c); c.SmallBlocks = SmallBlocksError },
			wantErr: []string{`block "d4" has 3 nodes, fewer than the base block size 4 (blockSizes[0])`, "Slurm 24.11 refuses it",
				"children count lower than bblock_node_cnt", "smallBlocks: drop"}},
		{name: "configured base with a smaller block on 24.05", spec: small, edit: func(c *Config) { sizes("24.05", 6)(c); c.SmallBlocks = SmallBlocksError },
			wantErr: []string{`block "d1" has 4 nodes, fewer than the base block size 6 (blockSizes[0])`, "Slurm 24.05"}},
		{name: "configured base drops smaller blocks", spec: small, edit: sizes("24.11", 6),
			want: "BlockName=d3 Nodes=n[9-14]\nBlockSizes=6\n"},
		{name: "smaller blocks are legal on 25.05", spec: small, edit: version("25.05"),
			want: "BlockName=d1 Nodes=n[1-4]\nBlockName=d2 Nodes=n[5-8]\nBlockName=d3 Nodes=n[9-14]\nBlockName=d4 Nodes=n[15-17]\nBlockSizes=4,8,16\n"},
		{name: "configured base on 25.05", spec: small, edit: sizes("25.05", 6, 12),
			want: "BlockName=d1 Nodes=n[1-4]\nBlockName=d2 Nodes=n[5-8]\nBlockName=d3 Nodes=n[9-14]\nBlockName=d4 Nodes=n[15-17]\nBlockSizes=6,12\n"},
		{name: "23.11 with unequal domains and no blockSizes: exit 3 naming the nodes", spec: small, edit: version("23.11"),
			wantErr: []string{"3 different sizes", "Slurm 23.11", "no base keeps them all", "most common size, 4, these 9 nodes would be left out: n[9-17]"}},
		{name: "23.11 with smallBlocks: drop keeps only blocks of the base size", spec: small, edit: func(c *Config) { version("23.11")(c); c.SmallBlocks = SmallBlocksDrop },
			want: "BlockName=d1 Nodes=n[1-4]\nBlockName=d2 Nodes=n[5-8]\n"},
		{name: "23.11 unequal blocks on request an error", spec: small, edit: func(c *Config) { version("23.11")(c); c.SmallBlocks = SmallBlocksError },
			wantErr: []string{`block "d3" has 6 nodes, not the base block size 4`, "Slurm 23.11", "no equal"}},
		{name: "every block too small", spec: small, edit: sizes("24.05", 16),
			wantErr: []string{"every block is smaller than the base block size 16 (blockSizes[0])", "24.05"}},
		{name: "no domain", spec: spec{leaves: map[string]string{"l": "n1"}}, edit: version("25.05"),
			wantErr: []string{"no accelerator domain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := build(t, tt.spec)
			out, err := newEngine(t, func(c *Config) { c.Plugin = PluginBlock; tt.edit(c) }).Render(context.Background(), g)
			if tt.wantErr != nil {
				if !errors.Is(err, engines.ErrInexpressible) {
					t.Fatalf("Render error = %v, want ErrInexpressible", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if got := body(string(out)); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s\nfull output:\n%s", got, tt.want, out)
			}
		})
	}
}

func version(v string) func(*Config) { return func(c *Config) { c.SlurmVersion = v } }

func sizes(v string, s ...int) func(*Config) {
	return func(c *Config) { c.SlurmVersion, c.BlockSizes = v, s }
}

func TestBlockVersionGate(t *testing.T) {
	t.Parallel()
	// New refuses the combination; Render checks again for an Engine built
	// around Validate.
	e := &Engine{cfg: Config{Plugin: PluginBlock}, version: 2305}
	_, err := e.Render(context.Background(), build(t, threeAndThree()))
	if !errors.Is(err, engines.ErrInexpressible) || !strings.Contains(err.Error(), "23.11") {
		t.Fatalf("Render for 23.05 = %v", err)
	}
	e = &Engine{cfg: Config{Plugin: PluginBlock, BlockSizes: []int{4}}, version: V2311}
	if _, err := e.Render(context.Background(), build(t, threeAndThree())); !errors.Is(err, engines.ErrInexpressible) {
		t.Fatalf("Render with BlockSizes for 23.11 = %v", err)
	}
}

func TestBlockCoverage(t *testing.T) {
	t.Parallel()
	g := build(t, spec{
		leaves:  map[string]string{"l": "n[1-12]"},
		domains: map[string]string{"a": "n[1-4]", "b": "n[5-6]", "c": "n[7-10]"},
		loose:   "cpu1",
	})
	tests := []struct {
		name   string
		edit   func(*Config)
		want   string
		reason []string
	}{
		{"25.05 keeps every block", version("25.05"), "cpu1,n11,n12", []string{"in no accelerator domain"}},
		{"24.11 keeps every block with an inferred base", version("24.11"), "cpu1,n11,n12", []string{"in no accelerator domain"}},
		{"24.11 drops a block smaller than the configured base", sizes("24.11", 4), "cpu1,n5,n6,n11,n12",
			[]string{"in no accelerator domain", "whose size Slurm 24.11 refuses", "smallBlocks: drop"}},
		{"configured base", sizes("25.05", 4), "cpu1,n11,n12", []string{"in no accelerator domain"}},
		{"an error reports no plan", func(c *Config) { version("24.11")(c); c.SmallBlocks = SmallBlocksError }, "cpu1,n11,n12", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cov := newEngine(t, func(c *Config) { c.Plugin = PluginBlock; tt.edit(c) }).Coverage(g)
			if got := strings.Join(cov.Uncovered, ","); got != tt.want {
				t.Errorf("Uncovered = %s, want %s", got, tt.want)
			}
			for _, r := range tt.reason {
				if !strings.Contains(cov.Reason, r) {
					t.Errorf("Reason %q does not contain %q", cov.Reason, r)
				}
			}
		})
	}
}

// TestBlocksFollowFabric checks, on random graphs and the bundled models,
// every rule at once: lines in fabric order, no empty or small block before
// 25.05, and no aggregate slurmctld would build that takes part of a
// switch together with blocks outside it.
func TestBlocksFollowFabric(t *testing.T) {
	t.Parallel()
	graphs := map[string]*topology.Graph{"3+3": build(t, threeAndThree()), "nvl72": model(t, "nvl72")}
	for seed := uint64(1); seed <= 60; seed++ {
		graphs[fmt.Sprintf("seed%d", seed)] = randomGraph(t, seed, randomOptions{domainSize: 2 + int(seed%4)})
	}
	for name, g := range graphs {
		for _, v := range []string{"24.05", "24.11", "25.05", "26.05"} {
			t.Run(name+"/"+v, func(t *testing.T) {
				t.Parallel()
				out := render(t, g, func(c *Config) { c.Plugin, c.SlurmVersion = PluginBlock, v })
				blocks, sz, _ := parseBlockConf(t, out)
				checkFabricBlocks(t, g, blocks, sz, v)
			})
		}
	}
}

// checkFabricBlocks verifies a rendered block list against g.
func checkFabricBlocks(t *testing.T, g *topology.Graph, blocks []confBlock, sz []int, v string) {
	t.Helper()
	ver, _ := ParseVersion(v)
	var realNames []string
	for _, b := range blocks {
		if b.nodes == nil {
			if !ver.AtLeast(V2505) {
				t.Fatalf("empty block %s for Slurm %s", b.name, v)
			}
			continue
		}
		realNames = append(realNames, b.nodes[0]) // blocks are known by their nodes: blockName renames them
		if !ver.AtLeast(V2505) && len(b.nodes) < sz[0] {
			t.Fatalf("block %s has %d nodes < base %d for Slurm %s", b.name, len(b.nodes), sz[0], v)
		}
	}
	var want []string
	for _, d := range g.DomainsInFabricOrder() {
		if ver.AtLeast(V2505) || len(d.Nodes) >= sz[0] { // smaller ones are dropped before 25.05
			want = append(want, d.Nodes[0])
		}
	}
	if !slices.Equal(realNames, want) {
		t.Fatalf("blocks starting with nodes %v, want the domains' in fabric order %v", realNames, want)
	}
	mults := make([]int, len(sz))
	for i, s := range sz {
		mults[i] = s / sz[0]
	}
	checkLaminar(t, g, blocks, slurmAggregates(len(blocks), mults))
}

// checkLaminar fails when an aggregate takes some but not all of the
// blocks below a switch together with blocks from outside it.
func checkLaminar(t *testing.T, g *topology.Graph, blocks []confBlock, aggs []aggregate) {
	t.Helper()
	// under[s] = indexes of the blocks below switch s. A block whose nodes
	// sit under several switches counts where its first node is (in the
	// test graphs, the first node in natural order is the one a
	// depth-first walk of the switches meets first).
	under := map[string][]int{}
	for i, b := range blocks {
		if b.nodes == nil {
			continue
		}
		for _, s := range g.Path(b.nodes[0]) {
			under[s.Name] = append(under[s.Name], i)
		}
	}
	for _, a := range aggs {
		for s, members := range under {
			in := 0
			for _, i := range members {
				if i >= a.start && i < a.end {
					in++
				}
			}
			realIn := 0
			for i := a.start; i < a.end; i++ {
				if blocks[i].nodes != nil {
					realIn++
				}
			}
			if in > 0 && in < len(members) && in < realIn {
				t.Fatalf("aggregate of %d at [%d,%d) holds %d of the %d blocks under switch %s and %d others:\n%v",
					a.mult, a.start, a.end, in, len(members), s, realIn-in, blocks)
			}
		}
	}
}

func TestPaddingNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 62)
	g := build(t, spec{
		links:   []string{"top>" + long + "01", "top>" + long + "02", "top>z"},
		leaves:  map[string]string{long + "01": "n[1-3]", long + "02": "n[4-6]", "z": "n7"},
		domains: map[string]string{"d1": "n1", "d2": "n2", "d3": "n3", "d4": "n4", "d5": "n5", "d6": "n6", "d7": "n7"},
	})
	out := render(t, g, func(c *Config) { c.Plugin, c.SlurmVersion = PluginBlock, "25.05" })
	blocks, _, _ := parseBlockConf(t, out)
	seen := map[string]bool{}
	pads := 0
	for _, b := range blocks {
		if seen[b.name] || len(b.name) > topology.MaxNameLen || !safeUnitName(b.name) {
			t.Errorf("block name %q repeated, too long or unsafe:\n%s", b.name, out)
		}
		seen[b.name] = true
		if b.nodes == nil {
			pads++
		}
	}
	if pads != 2 {
		t.Errorf("%d padding blocks, want 2 (one after each long leaf's 3 blocks):\n%s", pads, out)
	}
}
