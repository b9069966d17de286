package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/topology"
)

func TestRenderTree(t *testing.T) {
	t.Parallel()
	twoTier := spec{
		links:  []string{"spine1>leaf1", "spine1>leaf2"},
		leaves: map[string]string{"leaf1": "gpu[001-004]", "leaf2": "gpu[005-008]"},
		speeds: map[string]uint32{"leaf1": 400, "spine1": 800},
	}
	withEmpty := spec{
		links: []string{"core>spine1", "core>spine2", "spine1>leaf1", "spine1>leaf2", "spine2>leaf3", "spine2>leaf4"},
		// leaf2, leaf3 and leaf4 are empty, so spine2 is left with nothing.
		leaves: map[string]string{"leaf1": "n[1-4]", "leaf2": "", "leaf3": "", "leaf4": ""},
		loose:  "cpu[1-2]",
	}
	tests := []struct {
		name    string
		spec    spec
		version string
		edit    func(*Config)
		want    string // exact body (comment lines removed unless keepComments)
		// comments keeps the comment lines in the comparison.
		comments bool
		wantErr  []string // substrings; implies errors.Is(err, ErrInexpressible)
	}{
		{name: "two tiers", spec: twoTier, want: "SwitchName=leaf1 Nodes=gpu[001-004] LinkSpeed=400\n" +
			"SwitchName=leaf2 Nodes=gpu[005-008]\n" +
			"SwitchName=spine1 Switches=leaf[1-2] LinkSpeed=800\n"},
		{name: "empty switches left out before 25.05", spec: withEmpty, version: "24.11", edit: func(c *Config) { c.UnplacedSwitch = "" },
			want: "SwitchName=leaf1 Nodes=n[1-4]\nSwitchName=spine1 Switches=leaf1\nSwitchName=core Switches=spine1\n"},
		{name: "empty switches kept from 25.05", spec: withEmpty, version: "25.05", edit: func(c *Config) { c.UnplacedSwitch = "" },
			want: "SwitchName=leaf1 Nodes=n[1-4]\nSwitchName=leaf2\nSwitchName=leaf3\nSwitchName=leaf4\n" +
				"SwitchName=spine1 Switches=leaf[1-2]\nSwitchName=spine2 Switches=leaf[3-4]\nSwitchName=core Switches=spine[1-2]\n"},
		{name: "header names what is left out", spec: withEmpty, version: "22.05", comments: true, edit: func(c *Config) { c.UnplacedSwitch = "" },
			want: "# topology.conf for Slurm 22.05, TopologyPlugin=topology/tree. Written by toposcope: do not edit, it is replaced when the fabric changes.\n" +
				"# 3 switches, 4 nodes.\n" +
				"# 2 nodes under no switch left out (topology/tree never allocates them): cpu[1-2]\n" +
				"# 4 switches with no node below left out (Slurm 22.05 refuses a switch with neither nodes nor child switches; 25.05+ accepts it): leaf2, leaf3, leaf4, spine2\n" +
				"SwitchName=leaf1 Nodes=n[1-4]\nSwitchName=spine1 Switches=leaf1\nSwitchName=core Switches=spine1\n"},
		{name: "all empty before 25.05", spec: spec{links: []string{"s>l"}, leaves: map[string]string{"l": ""}, loose: "n1"}, version: "24.11", edit: func(c *Config) { c.UnplacedSwitch = "" },
			wantErr: []string{"all 2 switches (l, s) hold no node", "Slurm 24.11 refuses a switch with neither nodes nor child switches", "25.05"}},
		{name: "all empty from 25.05", spec: spec{links: []string{"s>l"}, leaves: map[string]string{"l": ""}, loose: "n1"}, version: "25.05", edit: func(c *Config) { c.UnplacedSwitch = "" },
			want: "SwitchName=l\nSwitchName=s Switches=l\n"},
		{name: "no switch", spec: spec{loose: "n[1-3]"}, version: "25.11", edit: func(c *Config) { c.UnplacedSwitch = "" }, wantErr: []string{"the graph has no switch"}},
		{name: "nodes with no place go under the unplaced switch", spec: withEmpty, version: "22.05", comments: true,
			want: "# topology.conf for Slurm 22.05, TopologyPlugin=topology/tree. Written by toposcope: do not edit, it is replaced when the fabric changes.\n" +
				"# 4 switches, 4 nodes.\n" +
				"# 2 nodes with no place in the fabric are under switch unplaced, so that Slurm keeps allocating them (no locality; unplacedSwitch): cpu[1-2]\n" +
				"# 4 switches with no node below left out (Slurm 22.05 refuses a switch with neither nodes nor child switches; 25.05+ accepts it): leaf2, leaf3, leaf4, spine2\n" +
				"SwitchName=leaf1 Nodes=n[1-4]\nSwitchName=spine1 Switches=leaf1\nSwitchName=core Switches=spine1\nSwitchName=unplaced Nodes=cpu[1-2]\n"},
		{name: "only unplaced nodes", spec: spec{loose: "n[1-3]"}, version: "25.11", want: "SwitchName=unplaced Nodes=n[1-3]\n"},
		{name: "unplaced switch name taken", spec: spec{leaves: map[string]string{"unplaced": "n1"}, loose: "n2"},
			wantErr: []string{`unplacedSwitch "unplaced" is also the name of a switch`}},
		{name: "hashed names get an ID comment", spec: spec{
			links:  []string{"ib/core:1>S-2c5eab0300b87b40"},
			leaves: map[string]string{"S-2c5eab0300b87b40": "n[01-02]"},
		}, comments: true, edit: func(c *Config) { c.Header = false },
			want: "SwitchName=S-2c5eab0300b87b40 Nodes=n[01-02]\n# ib-core-1-" + topology.SafeName("ib/core:1")[len("ib-core-1-"):] + " = \"ib/core:1\"\n" +
				"SwitchName=" + topology.SafeName("ib/core:1") + " Switches=S-2c5eab0300b87b40\n"},
		{name: "newline in an ID cannot inject a line", spec: spec{
			leaves: map[string]string{"evil\nSwitchName=x Nodes=n1\u2028": "n1"},
		}, comments: true, edit: func(c *Config) { c.Header = false },
			want: "# " + topology.SafeName("evil\nSwitchName=x Nodes=n1\u2028") + " = \"evil\\nSwitchName=x Nodes=n1\\u2028\"\n" +
				"SwitchName=" + topology.SafeName("evil\nSwitchName=x Nodes=n1\u2028") + " Nodes=n1\n"},
		{name: "no ID comments", spec: spec{leaves: map[string]string{"a b": "n1"}}, comments: true,
			edit: func(c *Config) { c.Header, c.IDComments = false, false },
			want: "SwitchName=" + topology.SafeName("a b") + " Nodes=n1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := build(t, tt.spec)
			e := newEngine(t, func(c *Config) {
				if tt.version != "" {
					c.SlurmVersion = tt.version
				}
				if tt.edit != nil {
					tt.edit(c)
				}
			})
			out, err := e.Render(context.Background(), g)
			if tt.wantErr != nil {
				if !errors.Is(err, engines.ErrInexpressible) {
					t.Fatalf("Render error = %v, want ErrInexpressible", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if out != nil {
					t.Errorf("Render returned output with an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			got := string(out)
			if !tt.comments {
				got = body(got)
			}
			if got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestTreeOrder checks on random trees that every switch is written after
// all its children (Slurm resolves levels in one pass then) and that output
// is byte-stable.
func TestTreeOrder(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 40; seed++ {
		g := randomGraph(t, seed, randomOptions{emptyLeaves: true})
		for _, v := range []string{"22.05", "25.05"} {
			raw, err := newEngine(t, func(c *Config) { c.SlurmVersion = v }).Render(context.Background(), g)
			if errors.Is(err, engines.ErrInexpressible) && v == "22.05" && len(g.NodesWithoutSwitch()) == len(g.Nodes()) {
				continue // every switch is empty: nothing 22.05 accepts
			}
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, v, err)
			}
			out := string(raw)
			if again := render(t, randomGraph(t, seed, randomOptions{emptyLeaves: true}), func(c *Config) { c.SlurmVersion = v }); again != out {
				t.Fatalf("seed %d: output not byte-stable", seed)
			}
			seen := map[string]bool{}
			for _, line := range strings.Split(body(out), "\n") {
				if line == "" {
					continue
				}
				f := strings.Fields(line)
				name := strings.TrimPrefix(f[0], "SwitchName=")
				for _, kv := range f[1:] {
					if list, ok := strings.CutPrefix(kv, "Switches="); ok {
						for _, c := range expand(t, list) {
							if !seen[c] {
								t.Fatalf("seed %d %s: %s lists child %s before it is defined", seed, v, name, c)
							}
						}
					}
				}
				seen[name] = true
			}
		}
	}
}

func TestTreeCoverage(t *testing.T) {
	t.Parallel()
	g := build(t, spec{leaves: map[string]string{"l1": "n[1-2]", "l2": ""}, loose: "cpu[1-3]"})
	for _, v := range []string{"22.05", "25.05"} {
		if cov := newEngine(t, func(c *Config) { c.SlurmVersion = v }).Coverage(g); len(cov.Uncovered) != 0 {
			t.Errorf("%s with the unplaced switch: Coverage = %+v, want every node covered", v, cov)
		}
		cov := newEngine(t, func(c *Config) { c.SlurmVersion, c.UnplacedSwitch = v, "" }).Coverage(g)
		if strings.Join(cov.Uncovered, ",") != "cpu1,cpu2,cpu3" || !strings.Contains(cov.Reason, "under no switch") {
			t.Errorf("%s: Coverage = %+v", v, cov)
		}
	}
	if cov := newEngine(t, nil).Coverage(build(t, spec{leaves: map[string]string{"l": "n1"}})); len(cov.Uncovered) != 0 || cov.Reason != "" {
		t.Errorf("full coverage reported as %+v", cov)
	}
}

func TestRenderCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := build(t, spec{leaves: map[string]string{"l": "n1"}})
	if _, err := newEngine(t, nil).Render(ctx, g); !errors.Is(err, context.Canceled) {
		t.Fatalf("Render on a canceled context = %v", err)
	}
}
