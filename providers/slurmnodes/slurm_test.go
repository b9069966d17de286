package slurmnodes_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/aws"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/providers/slurmnodes"
	"github.com/toposcope/toposcope/testenv/cloudsim"
	"github.com/toposcope/toposcope/testenv/slurmtest"
	"github.com/toposcope/toposcope/topology"
)

// lookup finds the providers these tests wrap.
func lookup(name string) (providers.Factory, error) {
	for _, f := range []providers.Factory{sim.NewFactory(), aws.NewFactory()} {
		if f.Name == name {
			return f, nil
		}
	}
	return providers.Factory{}, fmt.Errorf("no provider %q", name)
}

// TestFromRealSlurm reads the nodes of a real slurmctld (22.05 through
// `scontrol -o`, 24.11 through `scontrol --json`), whose instance IDs
// were set with scontrol update (a node feature on 22.05, Slurm's
// InstanceId on 24.11), and discovers them with the AWS provider (the
// real SDK) against the EC2 emulator: the Slurm names come back placed
// by their instances' topology, and a node without an instance ID stays
// unplaced. Each node carries the partitions slurmctld reports, one of
// them created at run time.
func TestFromRealSlurm(t *testing.T) {
	t.Parallel()
	fabric, err := sim.LoadGraph("small-tree")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(cloudsim.NewAWS(cloudsim.FromGraph(fabric), cloudsim.Faults{}))
	t.Cleanup(srv.Close) // the subtests run after this function returns
	// Slurm's names differ from the model's, so that only the instance
	// IDs can match them: n1, n2 are gpu001, gpu002 (leaf1); n3 is gpu009
	// (leaf2); n4 has no instance ID.
	ids := map[string]string{"n1": "i-0sim001", "n2": "i-0sim002", "n3": "i-0sim009"}
	feature := func(id string) []string { return []string{"features=instance-id=" + id + ",h100"} }
	for _, tt := range []struct {
		name       string
		v          slurmtest.Version
		show       []string // the command; nil: slurmrestd
		instanceID string
		set        func(id string) []string
	}{
		{"22.05", slurmtest.V2205, []string{"-o", "show", "nodes"}, slurmnodes.FromFeature, feature},
		{"24.11", slurmtest.V2411, []string{"--json", "show", "nodes"}, slurmnodes.FromInstanceID, func(id string) []string { return []string{"instanceid=" + id} }},
		{"22.05 slurmrestd", slurmtest.V2205, nil, slurmnodes.FromFeature, feature},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			slurmtest.Require(t, tt.v)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			c, err := slurmtest.Start(ctx, t, slurmtest.Options{Version: tt.v, Nodes: []string{"n1", "n2", "n3", "n4"}, JWT: tt.show == nil})
			if err != nil {
				t.Fatal(err)
			}
			if _, errOut, err := c.Run(ctx, "/usr/bin/scontrol", "create", "partitionname=gpu", "nodes=n1,n2"); err != nil {
				t.Fatalf("scontrol create partition: %v: %s", err, errOut)
			}
			for node, id := range ids {
				if _, errOut, err := c.Run(ctx, "/usr/bin/scontrol", append([]string{"update", "nodename=" + node}, tt.set(id)...)...); err != nil {
					t.Fatalf("scontrol update %s: %v: %s", node, err, errOut)
				}
			}
			doc := map[string]any{
				"instanceID": tt.instanceID,
				"provider":   map[string]any{"name": "aws", "params": map[string]any{"region": "us-west-2", "endpoint": srv.URL, "anonymous": true}},
			}
			if tt.show != nil {
				doc["command"] = c.ScontrolArgv(tt.show...)
			} else {
				doc["slurmrestd"] = restdParams(ctx, t, c)
			}
			var params yaml.Node
			if err := params.Encode(doc); err != nil {
				t.Fatal(err)
			}
			p, err := slurmnodes.NewFactory(lookup).New(&params, "params", providers.Deps{})
			if err != nil {
				t.Fatal(err)
			}
			g, err := p.Discover(ctx, providers.Request{})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(g); !slices.Equal(got, []string{"n1", "n2", "n3", "n4"}) {
				t.Fatalf("nodes = %v", got)
			}
			if !slices.Equal(g.Unplaced(), []string{"n4"}) {
				t.Errorf("unplaced = %v, want [n4]", g.Unplaced())
			}
			for node, want := range map[string]string{"n1": "all,gpu", "n2": "all,gpu", "n3": "all", "n4": "all"} {
				if n, _ := g.Node(node); n.Attributes[topology.AttrSlurmPartitions] != want {
					t.Errorf("%s partitions = %q, want %q", node, n.Attributes[topology.AttrSlurmPartitions], want)
				}
			}
			for node, model := range map[string]string{"n1": "gpu001", "n2": "gpu002", "n3": "gpu009"} {
				if got, want := leaf(g, node), leaf(fabric, model); got != want {
					t.Errorf("%s sits under %q, want %q (as %s)", node, got, want, model)
				}
			}
			// A request for two nodes: Slurm fills in their instance IDs.
			sub, err := p.Discover(ctx, providers.Request{Nodes: []providers.NodeRef{{Name: "n3"}, {Name: "n9"}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(sub); !slices.Equal(got, []string{"n3", "n9"}) || leaf(sub, "n3") != leaf(fabric, "gpu009") || !slices.Equal(sub.Unplaced(), []string{"n9"}) {
				t.Errorf("subset: nodes %v, n3 under %q, unplaced %v", got, leaf(sub, "n3"), sub.Unplaced())
			}
		})
	}
}

// TestPartitionsAndErrors: the partition filter, and a command that fails
// or lists nothing is an error, never an empty graph.
func TestPartitionsAndErrors(t *testing.T) {
	t.Parallel()
	build := func(t *testing.T, extra string) providers.Provider {
		t.Helper()
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(slurmnodes.NewFactory(lookup).Example+extra), &n); err != nil {
			t.Fatal(err)
		}
		p, err := slurmnodes.NewFactory(lookup).New(n.Content[0], "params", providers.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	g, err := build(t, "partitions: [debug]\n").Discover(context.Background(), providers.Request{})
	if err != nil || !slices.Equal(names(g), []string{"gpu010"}) {
		t.Fatalf("partition debug: %v %v", names(g), err)
	}
	if _, err := build(t, "partitions: [none]\n").Discover(context.Background(), providers.Request{}); err == nil || !strings.Contains(err.Error(), "slurm lists no node") {
		t.Errorf("an empty partition: %v", err)
	}
	var n yaml.Node
	_ = yaml.Unmarshal([]byte("command: [false]\nprovider: {name: sim}\n"), &n)
	p, err := slurmnodes.NewFactory(lookup).New(n.Content[0], "params", providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Discover(context.Background(), providers.Request{}); err == nil || !strings.Contains(err.Error(), `command "false"`) {
		t.Errorf("a failing command: %v", err)
	}
	_ = yaml.Unmarshal([]byte("instanceID: serial\nprovider: {name: slurm-nodes}\n"), &n)
	if _, err := slurmnodes.NewFactory(lookup).New(n.Content[0], "params", providers.Deps{}); err == nil ||
		!strings.Contains(err.Error(), "params.instanceID") || !strings.Contains(err.Error(), "params.provider.name") {
		t.Errorf("bad configuration: %v", err)
	}
}

// restdParams starts slurmrestd beside c and returns the slurmrestd
// parameters that reach it with a token c issued.
func restdParams(ctx context.Context, t *testing.T, c *slurmtest.Controller) map[string]any {
	t.Helper()
	restd, err := c.StartRESTD(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"url": restd.URL, "allowHTTP": true, "tokenFile": c.TokenFile(ctx, t, "nobody"), "user": "nobody"}
}

func names(g *topology.Graph) []string {
	var out []string
	for _, n := range g.Nodes() {
		out = append(out, n.Name)
	}
	slices.Sort(out)
	return out
}

// leaf is the ID of the switch a node hangs from, or "".
func leaf(g *topology.Graph, node string) string {
	path := g.Path(node)
	if len(path) == 0 {
		return ""
	}
	return path[len(path)-1].ID
}
