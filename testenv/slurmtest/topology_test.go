package slurmtest

import (
	"slices"
	"strings"
	"testing"
)

func TestParseTopology(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		out          string
		wantSwitches []Switch
		wantBlocks   []Block
		wantErr      string
	}{
		{
			name:    "empty output",
			out:     "",
			wantErr: "",
		},
		{
			name: "tree from 22.05",
			out: "SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=gpu[001-008]\n" +
				"SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=gpu[009-016]\n" +
				"SwitchName=spine1 Level=1 LinkSpeed=1 Nodes=gpu[001-016] Switches=leaf[1-2]\n",
			wantSwitches: []Switch{
				{Name: "leaf1", Level: 0, LinkSpeed: 1, Nodes: "gpu[001-008]"},
				{Name: "leaf2", Level: 0, LinkSpeed: 1, Nodes: "gpu[009-016]"},
				{Name: "spine1", Level: 1, LinkSpeed: 1, Nodes: "gpu[001-016]", Switches: "leaf[1-2]"},
			},
		},
		{
			name: "switch without nodes and blank lines",
			out:  "\n  SwitchName=core Level=2 LinkSpeed=100 Switches=spine[1-2]  \n\n",
			wantSwitches: []Switch{
				{Name: "core", Level: 2, LinkSpeed: 100, Switches: "spine[1-2]"},
			},
		},
		{
			name: "blocks with aggregates from 24.11",
			out: "BlockName=nvl01 BlockIndex=0 Nodes=gb[001-018] BlockSize=18\n" +
				"BlockName=nvl02 BlockIndex=1 Nodes=gb[019-036] BlockSize=18\n" +
				"AggregatedBlock=nvl[01-02] BlockIndex=2 Nodes=gb[001-036] BlockSize=36\n",
			wantBlocks: []Block{
				{Name: "nvl01", Index: 0, Nodes: "gb[001-018]", Size: 18},
				{Name: "nvl02", Index: 1, Nodes: "gb[019-036]", Size: 18},
				{Name: "nvl[01-02]", Index: 2, Nodes: "gb[001-036]", Size: 36, Aggregated: true},
			},
		},
		{
			name:       "empty block (25.05 style)",
			out:        "BlockName=b4 BlockIndex=3 BlockSize=18\n",
			wantBlocks: []Block{{Name: "b4", Index: 3, Size: 18}},
		},
		{name: "unknown record", out: "RingName=r0 Nodes=n[0-3] RingSize=4\n", wantErr: `unknown record "RingName"`},
		{name: "unknown field", out: "SwitchName=s Level=0 LinkSpeed=1 Weight=3\n", wantErr: `unknown field "Weight"`},
		{name: "missing level", out: "SwitchName=s LinkSpeed=1 Nodes=n1\n", wantErr: "missing field Level"},
		{name: "bad number", out: "BlockName=b BlockIndex=x BlockSize=18\n", wantErr: `BlockIndex="x" is not a number`},
		{name: "negative number", out: "SwitchName=s Level=-1 LinkSpeed=1\n", wantErr: "is not a number"},
		{name: "not key=value", out: "SwitchName=s Level=0 LinkSpeed=1 junk\n", wantErr: `"junk" is not Key=Value`},
		{name: "repeated field", out: "SwitchName=s Level=0 Level=1 LinkSpeed=1\n", wantErr: "Level appears twice"},
		{name: "empty name", out: "SwitchName= Level=0 LinkSpeed=1\n", wantErr: "empty SwitchName"},
		{name: "aggregate without nodes", out: "AggregatedBlock=b[1-2] BlockIndex=2 BlockSize=36\n", wantErr: "without Nodes"},
		{name: "error names the line", out: "\nSwitchName=a Level=0 LinkSpeed=1\nbogus\n", wantErr: "line 3"},
		{
			name:    "error message from scontrol is not topology",
			out:     "slurm_load_topo error: Unable to contact slurm controller (connect failure)\n",
			wantErr: "is not Key=Value",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sw, bl, err := ParseTopology(tc.out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseTopology error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTopology: %v", err)
			}
			if !slices.Equal(sw, tc.wantSwitches) {
				t.Errorf("switches:\n got %+v\nwant %+v", sw, tc.wantSwitches)
			}
			if !slices.Equal(bl, tc.wantBlocks) {
				t.Errorf("blocks:\n got %+v\nwant %+v", bl, tc.wantBlocks)
			}
		})
	}
}

func TestOptionsNormalize(t *testing.T) {
	t.Parallel()
	nodes := []string{"gpu001"}
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "tree by default", opts: Options{Version: V2205, Nodes: nodes}},
		{name: "block on 24.11", opts: Options{Version: V2411, Plugin: PluginBlock, Nodes: nodes}},
		{name: "block on 22.05", opts: Options{Version: V2205, Plugin: PluginBlock, Nodes: nodes}, wantErr: "Slurm 22.05 has no topology/block"},
		{name: "unknown version", opts: Options{Version: "23.02", Nodes: nodes}, wantErr: "unknown Slurm version"},
		{name: "unknown plugin", opts: Options{Version: V2411, Plugin: "topology/ring", Nodes: nodes}, wantErr: "unsupported topology plugin"},
		{name: "no nodes", opts: Options{Version: V2205}, wantErr: "Nodes is empty"},
		{name: "hostlist as a name", opts: Options{Version: V2205, Nodes: []string{"gpu[001-002]"}}, wantErr: "not a plain hostname"},
		{name: "space in a name", opts: Options{Version: V2205, Nodes: []string{"gpu 1"}}, wantErr: "not a plain hostname"},
		{name: "duplicate", opts: Options{Version: V2205, Nodes: []string{"a", "a"}}, wantErr: "listed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, err := tc.opts.normalize()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("normalize error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("normalize: %v", err)
			}
			if o.Plugin == "" {
				t.Errorf("Plugin left empty")
			}
		})
	}
}

// TestStartRejectsBlockOn2205 needs no Slurm: the combination is refused up front.
func TestStartRejectsBlockOn2205(t *testing.T) {
	t.Parallel()
	_, err := Start(t.Context(), t, Options{Version: V2205, Plugin: PluginBlock, Nodes: []string{"n1"}})
	if err == nil || !strings.Contains(err.Error(), "has no topology/block") {
		t.Fatalf("Start error = %v, want the 22.05 topology/block refusal", err)
	}
}
