package slurm

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/internal/slurmrest"
	"github.com/toposcope/toposcope/testenv/slurmtest"
	"github.com/toposcope/toposcope/topology"
)

// The partitions of TestTopologyPartitionSources.
var sourcePartitions = []slurmtest.Partition{
	{Name: "gpu", Nodes: "n[01-12]", Topology: "gpu"},
	{Name: "debug", Nodes: "n[13-16],n21", Topology: "dbg"},
}

// partitionTopologyCfg is a topology.yaml for 26.05 whose topologies gpu
// and dbg cover the partitions gpu and debug.
func partitionTopologyCfg(c *Config) {
	c.Plugin, c.SlurmVersion = PluginYAML, "26.05"
	c.Topologies = []TopologyConfig{
		{Name: "fabric", Plugin: KindTree, ClusterDefault: true},
		{Name: "gpu", Plugin: KindBlock, Partition: "gpu"},
		{Name: "dbg", Plugin: KindTree, Partition: "debug"},
	}
}

// TestTopologyPartitionSources reads the partitions that topologies name
// in the three ways the engine knows — from a real slurmrestd 22.05 with a
// token its slurmctld issued, from the nodes' slurmPartitions attribute,
// and from `scontrol -o show partitions` of a real slurmctld 26.05 — and
// checks that all three give the same topology.yaml, which slurmctld
// 26.05 loads with each partition on its topology: `scontrol show
// topology gpu` holds exactly the gpu partition's nodes, `dbg` exactly
// debug's.
func TestTopologyPartitionSources(t *testing.T) {
	slurmtest.Require(t, slurmtest.V2205)
	slurmtest.Require(t, slurmtest.V2605)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), slurmctldTimeout)
	defer cancel()
	g := build(t, threeAndThree())
	nodes := nodeNames(g)

	// 1. slurmrestd beside slurmctld 22.05.
	old, err := slurmtest.Start(ctx, t, slurmtest.Options{Version: slurmtest.V2205, Nodes: nodes, JWT: true,
		Topology:   "SwitchName=s Nodes=" + hostlist.Compress(nodes) + "\n",
		Partitions: []slurmtest.Partition{{Name: "gpu", Nodes: "n[01-12]"}, {Name: "debug", Nodes: "n[13-16],n21"}}})
	if err != nil {
		t.Fatal(err)
	}
	restd, err := old.StartRESTD(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := old.TokenFile(ctx, t, "nobody")
	fromREST := render(t, g, func(c *Config) {
		partitionTopologyCfg(c)
		c.Slurmrestd = &slurmrest.Config{Connection: httpretry.Connection{URL: restd.URL, AllowHTTP: true}, TokenFile: tokenFile, User: "nobody"}
		c.PartitionCommand = nil
	})

	// 2. The nodes' attribute, as slurm-nodes sets it.
	attrs := map[string]map[string]string{}
	for _, n := range nodes {
		var parts []string
		for _, p := range sourcePartitions {
			if members, _ := hostlist.Expand(p.Nodes); slices.Contains(members, n) {
				parts = append(parts, p.Name)
			}
		}
		attrs[n] = map[string]string{topology.AttrSlurmPartitions: strings.Join(append([]string{"all"}, parts...), ",")}
	}
	fromAttrs := render(t, g.WithAttributes(attrs), func(c *Config) { partitionTopologyCfg(c); c.PartitionCommand = nil })
	if fromAttrs != fromREST {
		t.Errorf("from the attribute:\n%s\nfrom slurmrestd:\n%s", fromAttrs, fromREST)
	}

	// 3. slurmctld 26.05 loads it; its scontrol gives the same file.
	ctl, err := slurmtest.Start(ctx, t, slurmtest.Options{Version: slurmtest.V2605, Plugin: slurmtest.PluginYAML, Nodes: nodes,
		Topology: fromREST, Partitions: sourcePartitions})
	if err != nil {
		t.Fatalf("slurmctld 26.05 refused topology.yaml:\n%s\n%v", fromREST, err)
	}
	fromScontrol := render(t, g, func(c *Config) {
		partitionTopologyCfg(c)
		c.PartitionCommand = ctl.ScontrolArgv("-o", "show", "partitions")
	})
	if fromScontrol != fromREST {
		t.Errorf("from scontrol -o show partitions:\n%s\nfrom slurmrestd:\n%s", fromScontrol, fromREST)
	}
	for _, p := range sourcePartitions {
		out := showTopology(ctx, t, ctl, p.Topology)
		sws, blocks, err := slurmtest.ParseTopology(out)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range sws {
			got = append(got, expandSorted(t, s.Nodes)...)
		}
		for _, b := range blocks {
			got = append(got, expandSorted(t, b.Nodes)...)
		}
		want := expandSorted(t, p.Nodes)
		hostlist.Sort(got)
		got = slices.Compact(got)
		if !slices.Equal(got, want) {
			t.Errorf("scontrol show topology %s covers %v, want partition %s's %v\n%s", p.Topology, got, p.Name, want, out)
		}
	}
}

func expandSorted(t *testing.T, list string) []string {
	t.Helper()
	if list == "" {
		return nil
	}
	names, err := hostlist.Expand(list)
	if err != nil {
		t.Fatal(err)
	}
	hostlist.Sort(names)
	return names
}

func TestParsePartitions(t *testing.T) {
	t.Parallel()
	// Lines as slurmctld 22.05 and 26.05 print them (shortened).
	out := "PartitionName=all AllowGroups=ALL Default=YES Nodes=n[01-04],cpu1 PriorityTier=1 State=UP TotalCPUs=5\n" +
		"PartitionName=idle AllowGroups=ALL Nodes=(null) State=UP\n" +
		"PartitionName=gone Nodes=NONE State=UP\n\n"
	got, err := ParsePartitions([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got["all"], []string{"n01", "n02", "n03", "n04", "cpu1"}) || len(got["idle"]) != 0 || len(got["gone"]) != 0 || len(got) != 3 {
		t.Errorf("got %v", got)
	}
	for _, bad := range []string{"NodeName=n01 State=IDLE\n", "PartitionName=a Nodes=n[4-1]\n", ""} {
		if _, err := ParsePartitions([]byte(bad)); !errors.Is(err, ErrPartitions) {
			t.Errorf("%q: error %v, want ErrPartitions", bad, err)
		}
	}
}

func TestTopologyPartitionErrors(t *testing.T) {
	t.Parallel()
	g := build(t, threeAndThree())
	withParts := g.WithAttributes(map[string]map[string]string{"n01": {topology.AttrSlurmPartitions: "gpu"}})
	tests := []struct {
		name    string
		g       *topology.Graph
		edit    func(*Config)
		want    error
		wantMsg string
	}{
		{"unknown partition", withParts, func(c *Config) { c.Topologies[1].Partition = "nope" }, engines.ErrInexpressible, `lists no partition "nope" (it has gpu)`},
		{"no source", g, func(c *Config) { c.PartitionCommand = nil }, ErrPartitions, "neither slurmrestd nor partitionCommand"},
		{"command fails", g, func(c *Config) { c.PartitionCommand = []string{"/bin/false"} }, ErrPartitions, "partitionCommand /bin/false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, func(c *Config) { partitionTopologyCfg(c); tt.edit(c) })
			_, err := e.Render(context.Background(), tt.g)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %v, want %v naming %q", err, tt.want, tt.wantMsg)
			}
		})
	}
	t.Run("empty partition is flat", func(t *testing.T) {
		t.Parallel()
		e := newEngine(t, func(c *Config) {
			partitionTopologyCfg(c)
			c.PartitionCommand = []string{"/usr/bin/printf", `PartitionName=gpu Nodes=(null)\nPartitionName=debug Nodes=n01\n`}
		})
		out, err := e.Render(context.Background(), g)
		if err != nil || !strings.Contains(string(out), "topology: gpu\n  cluster_default: false\n  flat: true") {
			t.Fatalf("%v\n%s", err, out)
		}
	})
	t.Run("validation", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			t    TopologyConfig
			want string
		}{
			{TopologyConfig{Name: "a", Plugin: KindTree, Partition: "gpu", Nodes: "n01"}, "topologies[1].partition: and nodes are alternatives"},
			{TopologyConfig{Name: "a", Plugin: KindFlat, Partition: "gpu"}, "topologies[1].partition: is not used by a flat topology"},
			{TopologyConfig{Name: "a", Plugin: KindTree, Partition: "g pu"}, "topologies[1].partition: \"g pu\" is not a Slurm partition name"},
		} {
			c := DefaultConfig()
			partitionTopologyCfg(&c)
			c.Topologies = append(c.Topologies[:1], tc.t)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v: error %v, want %q", tc.t, err, tc.want)
			}
		}
	})
}
