package slurmtest

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// hostnames returns prefix+first … prefix+last, zero-padded to width digits.
func hostnames(prefix string, first, last, width int) []string {
	var out []string
	for i := first; i <= last; i++ {
		out = append(out, fmt.Sprintf("%s%0*d", prefix, width, i))
	}
	return out
}

// bigTree is 2,000 nodes n0001…n2000 under 25 leaves of 80 and one spine.
func bigTree() (topo string, want []Switch) {
	var b strings.Builder
	for i := 1; i <= 25; i++ {
		nodes := fmt.Sprintf("n[%04d-%04d]", (i-1)*80+1, i*80)
		fmt.Fprintf(&b, "SwitchName=leaf%02d Nodes=%s\n", i, nodes)
		want = append(want, Switch{Name: fmt.Sprintf("leaf%02d", i), LinkSpeed: 1, Nodes: nodes})
	}
	b.WriteString("SwitchName=spine Switches=leaf[01-25]\n")
	want = append(want, Switch{Name: "spine", Level: 1, LinkSpeed: 1, Nodes: "n[0001-2000]", Switches: "leaf[01-25]"})
	return b.String(), want
}

// bigBlocks is 2,000 nodes in 100 blocks of 20 with BlockSizes=20,40.
func bigBlocks() (topo string, want []Block) {
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		nodes := fmt.Sprintf("n[%04d-%04d]", (i-1)*20+1, i*20)
		fmt.Fprintf(&b, "BlockName=b%03d Nodes=%s\n", i, nodes)
		want = append(want, Block{Name: fmt.Sprintf("b%03d", i), Index: i - 1, Nodes: nodes, Size: 20})
	}
	for i := 1; i <= 100; i += 2 {
		want = append(want, Block{Name: fmt.Sprintf("b[%03d-%03d]", i, i+1),
			Nodes: fmt.Sprintf("n[%04d-%04d]", (i-1)*20+1, (i+1)*20), Size: 40, Aggregated: true})
	}
	b.WriteString("BlockSizes=20,40\n")
	return b.String(), want
}

const (
	twoLeaves = "SwitchName=leaf1 Nodes=gpu[001-008]\nSwitchName=leaf2 Nodes=gpu[009-016]\nSwitchName=spine1 Switches=leaf[1-2]\n"
	nvl4x18   = "BlockName=nvl01 Nodes=gb[001-018]\nBlockName=nvl02 Nodes=gb[019-036]\n" +
		"BlockName=nvl03 Nodes=gb[037-054]\nBlockName=nvl04 Nodes=gb[055-072]\nBlockSizes=18,36,72\n"
)

// wantTwoLeaves is how Slurm prints twoLeaves.
func wantTwoLeaves() []Switch {
	return []Switch{
		{Name: "leaf1", Level: 0, LinkSpeed: 1, Nodes: "gpu[001-008]"},
		{Name: "leaf2", Level: 0, LinkSpeed: 1, Nodes: "gpu[009-016]"},
		{Name: "spine1", Level: 1, LinkSpeed: 1, Nodes: "gpu[001-016]", Switches: "leaf[1-2]"},
	}
}

// wantNVL4x18 is how Slurm 24.11 prints nvl4x18, aggregates included.
func wantNVL4x18() []Block {
	return []Block{
		{Name: "nvl01", Index: 0, Nodes: "gb[001-018]", Size: 18},
		{Name: "nvl02", Index: 1, Nodes: "gb[019-036]", Size: 18},
		{Name: "nvl03", Index: 2, Nodes: "gb[037-054]", Size: 18},
		{Name: "nvl04", Index: 3, Nodes: "gb[055-072]", Size: 18},
		{Name: "nvl[01-02]", Nodes: "gb[001-036]", Size: 36, Aggregated: true},
		{Name: "nvl[03-04]", Nodes: "gb[037-072]", Size: 36, Aggregated: true},
		{Name: "nvl[01-04]", Nodes: "gb[001-072]", Size: 72, Aggregated: true},
	}
}

// checkBlocks compares blocks. Aggregated blocks' indexes are Slurm's internal
// numbering (24.11 printed 4, 6, 5 for the three aggregates of 4×18), so only their
// uniqueness is checked.
func checkBlocks(t *testing.T, got, want []Block) {
	t.Helper()
	norm := func(bs []Block) []Block {
		out := slices.Clone(bs)
		for i := range out {
			if out[i].Aggregated {
				out[i].Index = 0
			}
		}
		return out
	}
	if !slices.Equal(norm(got), norm(want)) {
		t.Errorf("blocks:\n got %+v\nwant %+v", got, want)
	}
	seen := map[int]bool{}
	for _, b := range got {
		if seen[b.Index] {
			t.Errorf("BlockIndex %d appears twice", b.Index)
		}
		seen[b.Index] = true
	}
}

func TestStartShowTopology(t *testing.T) {
	t.Parallel()
	bigTreeConf, bigTreeWant := bigTree()
	bigBlockConf, bigBlockWant := bigBlocks()
	tests := []struct {
		name         string
		opts         Options
		wantSwitches []Switch
		wantBlocks   []Block
		wantErr      string // Start must fail with this in its error (from the log)
	}{
		{
			name:         "22.05 two-leaf tree",
			opts:         Options{Version: V2205, Nodes: hostnames("gpu", 1, 16, 3), Topology: twoLeaves},
			wantSwitches: wantTwoLeaves(),
		},
		{
			name: "22.05 refuses a switch with nodes and switches",
			opts: Options{Version: V2205, Nodes: hostnames("gpu", 1, 16, 3),
				Topology: "SwitchName=leaf1 Nodes=gpu[001-008]\nSwitchName=leaf2 Nodes=gpu[009-016] Switches=leaf1\n"},
			wantErr: "switch leaf2 has both child switches and nodes",
		},
		{
			name: "22.05 refuses an unknown child switch",
			opts: Options{Version: V2205, Nodes: hostnames("gpu", 1, 16, 3),
				Topology: "SwitchName=leaf1 Nodes=gpu[001-016]\nSwitchName=spine Switches=leaf[1-2]\n"},
			wantErr: "has invalid child (leaf2)",
		},
		{
			name:         "22.05 2000 nodes",
			opts:         Options{Version: V2205, Nodes: hostnames("n", 1, 2000, 4), Topology: bigTreeConf},
			wantSwitches: bigTreeWant,
		},
		{
			name:         "24.11 two-leaf tree",
			opts:         Options{Version: V2411, Plugin: PluginTree, Nodes: hostnames("gpu", 1, 16, 3), Topology: twoLeaves},
			wantSwitches: wantTwoLeaves(),
		},
		{
			name:       "24.11 4 blocks of 18 with aggregates",
			opts:       Options{Version: V2411, Plugin: PluginBlock, Nodes: hostnames("gb", 1, 72, 3), Topology: nvl4x18},
			wantBlocks: wantNVL4x18(),
		},
		{
			name: "24.11 refuses an empty block",
			opts: Options{Version: V2411, Plugin: PluginBlock, Nodes: hostnames("gb", 1, 72, 3),
				Topology: nvl4x18 + "BlockName=nvl05\n"},
			wantErr: "block nvl05 hasn't got nodes",
		},
		{
			name: "24.11 refuses a block smaller than the base size",
			opts: Options{Version: V2411, Plugin: PluginBlock, Nodes: hostnames("gb", 1, 72, 3),
				Topology: "BlockName=nvl01 Nodes=gb[001-018]\nBlockName=nvl02 Nodes=gb[019-030]\nBlockSizes=18,36\n"},
			wantErr: "children count lower than bblock_node_cnt",
		},
		{
			name: "24.11 refuses BlockSizes that are not base times 2^k",
			opts: Options{Version: V2411, Plugin: PluginBlock, Nodes: hostnames("gb", 1, 72, 3),
				Topology: strings.Replace(nvl4x18, "BlockSizes=18,36,72", "BlockSizes=18,54", 1)},
			wantErr: "Invalid BlockSizes value: 54",
		},
		{
			name: "24.11 refuses a repeated block name",
			opts: Options{Version: V2411, Plugin: PluginBlock, Nodes: hostnames("gb", 1, 72, 3),
				Topology: "BlockName=nvl01 Nodes=gb[001-018]\nBlockName=nvl01 Nodes=gb[019-036]\nBlockSizes=18\n"},
			wantErr: "Block (nvl01) has already been defined",
		},
		{
			name: "22.05 refuses a repeated switch name",
			opts: Options{Version: V2205, Nodes: hostnames("gpu", 1, 16, 3),
				Topology: "SwitchName=leaf1 Nodes=gpu[001-008]\nSwitchName=leaf1 Nodes=gpu[009-016]\n"},
			wantErr: "Switch (leaf1) has already been defined",
		},
		{
			name:       "24.11 2000 nodes in 100 blocks",
			opts:       Options{Version: V2411, Plugin: PluginBlock, Nodes: hostnames("n", 1, 2000, 4), Topology: bigBlockConf},
			wantBlocks: bigBlockWant,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			Require(t, tc.opts.Version)
			c, err := Start(t.Context(), t, tc.opts)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("Start accepted the topology, want a refusal containing %q", tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "slurmctld log") {
					t.Fatalf("Start error does not show the log line %q:\n%v", tc.wantErr, err)
				}
				t.Logf("refused as expected: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err := c.ShowTopology(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			sw, bl, err := ParseTopology(out)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sw, tc.wantSwitches) {
				t.Errorf("switches:\n got %+v\nwant %+v", sw, tc.wantSwitches)
			}
			checkBlocks(t, bl, tc.wantBlocks)
		})
	}
}

func TestReconfigure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		opts     Options
		next     string // a topology slurmctld accepts
		wantNext []Switch
		wantBlk  []Block
		bad      string // a topology slurmctld refuses on reconfigure
		badLog   string
	}{
		{
			name: "22.05 tree",
			opts: Options{Version: V2205, Nodes: hostnames("gpu", 1, 16, 3), Topology: twoLeaves},
			next: "SwitchName=leaf1 Nodes=gpu[001-004]\nSwitchName=leaf2 Nodes=gpu[005-016]\nSwitchName=spine1 Switches=leaf[1-2]\n",
			wantNext: []Switch{
				{Name: "leaf1", Level: 0, LinkSpeed: 1, Nodes: "gpu[001-004]"},
				{Name: "leaf2", Level: 0, LinkSpeed: 1, Nodes: "gpu[005-016]"},
				{Name: "spine1", Level: 1, LinkSpeed: 1, Nodes: "gpu[001-016]", Switches: "leaf[1-2]"},
			},
			bad:    "SwitchName=leaf1 Nodes=gpu[001-016] Switches=leaf2\n",
			badLog: "switch leaf1 has both child switches and nodes",
		},
		{
			name: "24.11 block",
			opts: Options{Version: V2411, Plugin: PluginBlock, Nodes: hostnames("gb", 1, 72, 3), Topology: nvl4x18},
			next: "BlockName=nvl01 Nodes=gb[001-036]\nBlockName=nvl02 Nodes=gb[037-072]\nBlockSizes=36,72\n",
			wantBlk: []Block{
				{Name: "nvl01", Index: 0, Nodes: "gb[001-036]", Size: 36},
				{Name: "nvl02", Index: 1, Nodes: "gb[037-072]", Size: 36},
				{Name: "nvl[01-02]", Nodes: "gb[001-072]", Size: 72, Aggregated: true},
			},
			bad:    "BlockName=nvl01 Nodes=gb[001-036]\nBlockName=nvl02\nBlockSizes=36,72\n",
			badLog: "block nvl02 hasn't got nodes",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			Require(t, tc.opts.Version)
			ctx := t.Context()
			c, err := Start(ctx, t, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(c.TopologyPath(), []byte(tc.next), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := c.Reconfigure(ctx); err != nil {
				t.Fatal(err)
			}
			out, err := c.ShowTopology(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sw, bl, err := ParseTopology(out)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sw, tc.wantNext) {
				t.Errorf("switches after reconfigure:\n got %+v\nwant %+v", sw, tc.wantNext)
			}
			checkBlocks(t, bl, tc.wantBlk)

			// The argv handed to code under test reaches the same controller.
			argv := c.ScontrolArgv("show", "topology")
			viaArgv, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
			if err != nil {
				t.Fatalf("%q: %v", argv, err)
			}
			if string(viaArgv) != out {
				t.Errorf("ScontrolArgv output differs:\n%s\nvs ShowTopology:\n%s", viaArgv, out)
			}

			// A refused file is an error from Reconfigure, naming the log line.
			if err := os.WriteFile(c.TopologyPath(), []byte(tc.bad), 0o644); err != nil {
				t.Fatal(err)
			}
			err = c.Reconfigure(ctx)
			if err == nil {
				t.Fatalf("Reconfigure accepted a bad topology.conf:\n%s", tc.bad)
			}
			if !strings.Contains(err.Error(), tc.badLog) {
				t.Errorf("Reconfigure error does not show %q:\n%v", tc.badLog, err)
			}
			t.Logf("refused as expected: %v", err)
			if !strings.Contains(c.Log(), tc.badLog) {
				t.Errorf("Log() lacks %q", tc.badLog)
			}
			// In foreground mode the refusal is fatal; the controller reports that.
			if _, err := c.ShowTopology(ctx); err == nil {
				t.Errorf("ShowTopology worked after slurmctld refused a reconfigure; expected it to have exited")
			}
		})
	}
}

// TestControllersDoNotMix runs two 24.11 controllers at once and checks that each
// answers with its own topology: they must not share ports, state or the /run where
// slurmctld puts the socket that scontrol authenticates through.
func TestControllersDoNotMix(t *testing.T) {
	t.Parallel()
	Require(t, V2411)
	ctx := t.Context()
	first, err := Start(ctx, t, Options{Version: V2411, Plugin: PluginBlock, Nodes: hostnames("gb", 1, 72, 3), Topology: nvl4x18})
	if err != nil {
		t.Fatal(err)
	}
	second, err := Start(ctx, t, Options{Version: V2411, Plugin: PluginTree, Nodes: hostnames("gpu", 1, 16, 3), Topology: twoLeaves})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		c      *Controller
		wantSw []Switch
		wantBl []Block
	}{
		{name: "first (started earlier)", c: first, wantBl: wantNVL4x18()},
		{name: "second", c: second, wantSw: wantTwoLeaves()},
	} {
		out, err := tc.c.ShowTopology(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		sw, bl, err := ParseTopology(out)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(sw, tc.wantSw) {
			t.Errorf("%s: switches %+v, want %+v", tc.name, sw, tc.wantSw)
		}
		checkBlocks(t, bl, tc.wantBl)
	}
}
