package k8slabels_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/k8slabels"
	"github.com/toposcope/toposcope/providers/nvlink"
	goldenfile "github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const clique = "7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab.32766"

func aws(layers ...string) map[string]string {
	l := map[string]string{}
	for i, v := range layers {
		if v != "" {
			l[k8slabels.AWSLayerPrefix+string(rune('1'+i))] = v
		}
	}
	return l
}

func with(l map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range l {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func static(t *testing.T, edit func(*k8slabels.Config), nodes ...k8slabels.StaticNode) *k8slabels.Provider {
	t.Helper()
	cfg := k8slabels.DefaultConfig()
	cfg.Nodes = nodes
	if edit != nil {
		edit(&cfg)
	}
	p, err := k8slabels.New(cfg, nil, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// path returns the switch IDs above node, closest first.
func path(g *topology.Graph, node string) []string {
	var out []string
	for _, s := range g.Path(node) {
		out = append(out, s.ID)
	}
	return out
}

func TestPlacement(t *testing.T) {
	t.Parallel()
	custom := func(c *k8slabels.Config) {
		c.Tiers, c.TierLabels = k8slabels.TiersCustom, []string{"example.com/rack", "example.com/row"}
		c.DomainLabel, c.SubDomainLabel = "example.com/nvl", "example.com/tray"
	}
	tests := []struct {
		name        string
		edit        func(*k8slabels.Config)
		labels      map[string]string
		wantPath    []string
		wantDomain  string
		wantSub     string
		annotations map[string]string
	}{
		{"aws three layers", nil, aws("nn-1", "nn-2", "nn-3"), []string{"nn-3", "nn-2", "nn-1"}, "", "", nil},
		{"aws four layers", nil, aws("nn-1", "nn-2", "nn-3", "nn-4"), []string{"nn-4", "nn-3", "nn-2", "nn-1"}, "", "", nil},
		{"aws one layer (capacity reservation)", nil, aws("nn-1"), []string{"nn-1"}, "", "", nil},
		{"gke block and subblock", nil, map[string]string{k8slabels.GKEBlockLabel: "b1", k8slabels.GKESubblockLabel: "s1", k8slabels.GKEHostLabel: "h1"},
			[]string{"s1", "b1"}, "", "", nil},
		{"gke with host tier", func(c *k8slabels.Config) { c.GKEHost = true },
			map[string]string{k8slabels.GKEBlockLabel: "b1", k8slabels.GKESubblockLabel: "s1", k8slabels.GKEHostLabel: "h1"},
			[]string{"h1", "s1", "b1"}, "", "", nil},
		{"qualified ids", func(c *k8slabels.Config) { c.Qualify = true }, aws("nn-1", "nn-2"), []string{"nn-1/nn-2", "nn-1"}, "", "", nil},
		{"clique only", nil, map[string]string{nvlink.CliqueLabel: strings.ToUpper(clique[:36]) + clique[36:]}, nil, clique, "", nil},
		{"aws and clique", nil, with(aws("nn-1", "nn-2"), nvlink.CliqueLabel, clique), []string{"nn-2", "nn-1"}, clique, "", nil},
		{"no labels", nil, map[string]string{"team": "ml"}, nil, "", "", nil},
		{"empty value is no value", nil, with(aws("nn-1"), k8slabels.AWSLayerPrefix+"2", ""), []string{"nn-1"}, "", "", nil},
		{"custom keys closest first", custom,
			map[string]string{"example.com/rack": "r7", "example.com/row": "row2", "example.com/nvl": "nvl1", "example.com/tray": "tray3"},
			[]string{"r7", "row2"}, "nvl1", "tray3", nil},
		{"tiers none ignores aws", func(c *k8slabels.Config) { c.Tiers = k8slabels.TiersNone },
			with(aws("nn-1"), nvlink.CliqueLabel, clique), nil, clique, "", nil},
		{"no domain label", func(c *k8slabels.Config) { c.DomainLabel = k8slabels.NoLabel }, with(aws("nn-1"), nvlink.CliqueLabel, "garbage"), []string{"nn-1"}, "", "", nil},
		{"agent annotations", nil, aws("nn-1"), []string{"nn-1"}, clique, "rack-7",
			map[string]string{keys.NVLinkClique: clique, keys.NVLinkRack: "rack-7"}},
		{"agent annotation agrees with the label", nil, map[string]string{nvlink.CliqueLabel: clique}, nil, clique, "",
			map[string]string{keys.NVLinkClique: clique}},
		{"agent annotations off", func(c *k8slabels.Config) { c.AgentAnnotations = false }, nil, nil, "", "",
			map[string]string{keys.NVLinkClique: clique}},
		{"Topograph broker's cluster-id", nil, aws("nn-1"), []string{"nn-1"}, clique, "",
			map[string]string{keys.TopographClusterID: clique}},
		{"toposcope's annotation wins over the broker's", nil, nil, nil, clique, "",
			map[string]string{keys.NVLinkClique: clique, keys.TopographClusterID: "not.checked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := static(t, tt.edit, k8slabels.StaticNode{Name: "n1", Labels: tt.labels, Annotations: tt.annotations})
			g, err := p.Discover(context.Background(), providers.Request{})
			if err != nil {
				t.Fatal(err)
			}
			if got := path(g, "n1"); !slices.Equal(got, tt.wantPath) {
				t.Errorf("path = %v, want %v", got, tt.wantPath)
			}
			n, _ := g.Node("n1")
			if n.Domain != tt.wantDomain || n.SubDomain != tt.wantSub {
				t.Errorf("domain = %q/%q, want %q/%q", n.Domain, n.SubDomain, tt.wantDomain, tt.wantSub)
			}
		})
	}
}

// TestBadInput: every bad label is an error naming the node and the key,
// never a smaller topology.
func TestBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(*k8slabels.Config)
		nodes []k8slabels.StaticNode
		want  error
		parts []string
	}{
		{"clique does not parse", nil,
			[]k8slabels.StaticNode{{Name: "gpu1", Labels: map[string]string{nvlink.CliqueLabel: "not-a-clique"}}},
			k8slabels.ErrBadLabel, []string{`node "gpu1"`, nvlink.CliqueLabel, "not-a-clique"}},
		{"clique id not a number", nil,
			[]k8slabels.StaticNode{{Name: "gpu1", Labels: map[string]string{nvlink.CliqueLabel: clique[:37] + "x"}}},
			nvlink.ErrSyntax, []string{`node "gpu1"`, nvlink.CliqueLabel}},
		{"agent annotation disagrees with the label", nil,
			[]k8slabels.StaticNode{{Name: "gpu1", Labels: map[string]string{nvlink.CliqueLabel: clique},
				Annotations: map[string]string{keys.NVLinkClique: clique[:37] + "1"}}},
			k8slabels.ErrConflict, []string{`node "gpu1"`, nvlink.CliqueLabel, keys.NVLinkClique}},
		{"agent annotation does not parse", nil,
			[]k8slabels.StaticNode{{Name: "gpu1", Annotations: map[string]string{keys.NVLinkClique: "x.1"}}},
			k8slabels.ErrBadLabel, []string{`node "gpu1"`, keys.NVLinkClique}},
		{"aws layer gap", nil,
			[]k8slabels.StaticNode{{Name: "gpu1", Labels: aws("nn-1", "", "nn-3")}},
			k8slabels.ErrBadLabel, []string{`node "gpu1"`, "network-node-layer-3", "network-node-layer-2"}},
		{"gke subblock without block", nil,
			[]k8slabels.StaticNode{{Name: "gpu1", Labels: map[string]string{k8slabels.GKESubblockLabel: "s1"}}},
			k8slabels.ErrBadLabel, []string{`node "gpu1"`, k8slabels.GKESubblockLabel, k8slabels.GKEBlockLabel}},
		{"aws and gke on one node", nil,
			[]k8slabels.StaticNode{{Name: "gpu1", Labels: with(aws("nn-1"), k8slabels.GKEBlockLabel, "b1")}},
			k8slabels.ErrConflict, []string{`node "gpu1"`, k8slabels.GKEBlockLabel}},
		{"switch under two parents", nil,
			[]k8slabels.StaticNode{{Name: "gpu1", Labels: aws("nn-1", "nn-leaf")}, {Name: "gpu2", Labels: aws("nn-9", "nn-leaf")}},
			k8slabels.ErrConflict, []string{`node "gpu2"`, "network-node-layer-2", "nn-leaf", `node "gpu1"`}},
		{"sub-domain in two domains", func(c *k8slabels.Config) { c.DomainLabel, c.SubDomainLabel = "example.com/nvl", "example.com/rack" },
			[]k8slabels.StaticNode{
				{Name: "gpu1", Labels: map[string]string{"example.com/nvl": "d1", "example.com/rack": "r1"}},
				{Name: "gpu2", Labels: map[string]string{"example.com/nvl": "d2", "example.com/rack": "r1"}}},
			k8slabels.ErrConflict, []string{`node "gpu2"`, "example.com/rack", `"r1"`}},
		{"sub-domain without domain", func(c *k8slabels.Config) { c.DomainLabel, c.SubDomainLabel = "example.com/nvl", "example.com/rack" },
			[]k8slabels.StaticNode{{Name: "gpu1", Labels: map[string]string{"example.com/rack": "r1"}}},
			k8slabels.ErrBadLabel, []string{`node "gpu1"`, "example.com/rack", "example.com/nvl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := static(t, tt.edit, tt.nodes...)
			g, err := p.Discover(context.Background(), providers.Request{})
			if !errors.Is(err, tt.want) || g != nil {
				t.Fatalf("Discover = %v, %v; want %v", g, err, tt.want)
			}
			for _, part := range tt.parts {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not mention %q", err, part)
				}
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc, field string
	}{
		{"tiers: azure", "params.tiers"},
		{"tiers: custom", "params.tierLabels"},
		{"tierLabels: [a]", "params.tierLabels"},
		{"tiers: custom\ntierLabels: ['bad key!']", "params.tierLabels[0]"},
		{"tiers: aws\ngkeHost: true", "params.gkeHost"},
		{"placeholderSwitch: cpu", "params.placeholderSwitch"},
		{"tiers: crusoe\nplaceholderSwitch: 'no ib'", "params.placeholderSwitch"},
		{"domainLabel: ''", "params.domainLabel"},
		{"domainLabel: '-'\nsubDomainLabel: example.com/rack", "params.subDomainLabel"},
		{"nodeSelector: 'a in ('", "params.nodeSelector"},
		{"nodes: [{name: 'a,b'}]", "params.nodes[0].name"},
		{"nodes: [{name: a}, {name: a}]", "params.nodes[1].name"},
		{"qps: 0\nnodes: [{name: a}]", "params.qps"},
	}
	f := k8slabels.NewFactory()
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			t.Parallel()
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(tt.doc), &n); err != nil {
				t.Fatal(err)
			}
			_, err := f.New(n.Content[0], "params", providers.Deps{})
			var fe *config.FieldError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.field+" ") && !strings.Contains(err.Error(), tt.field+":") {
				t.Fatalf("New(%q) = %v, want an error on %s", tt.doc, err, tt.field)
			}
		})
	}
}

// TestRequest: requested nodes match by name, by hostname label and by
// instance ID; an unknown one is kept unplaced.
func TestRequest(t *testing.T) {
	t.Parallel()
	p := static(t, nil,
		k8slabels.StaticNode{Name: "ip-10-0-0-1.ec2.internal", ProviderID: "aws:///us-east-1a/i-01", Labels: aws("nn-1", "nn-2")},
		k8slabels.StaticNode{Name: "node-b", Labels: with(aws("nn-1", "nn-3"), "kubernetes.io/hostname", "gpu-b")},
		k8slabels.StaticNode{Name: "node-c", Labels: aws("nn-1", "nn-4")},
	)
	g, err := p.Discover(context.Background(), providers.Request{Nodes: []providers.NodeRef{
		{Name: "gpu-a", InstanceID: "i-01", Region: "us-east-1"}, {Name: "gpu-b"}, {Name: "stranger"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := path(g, "gpu-a"); !slices.Equal(got, []string{"nn-2", "nn-1"}) {
		t.Errorf("gpu-a (by instance ID) path = %v", got)
	}
	if got := path(g, "gpu-b"); !slices.Equal(got, []string{"nn-3", "nn-1"}) {
		t.Errorf("gpu-b (by hostname) path = %v", got)
	}
	if got := g.Unplaced(); !slices.Equal(got, []string{"stranger"}) {
		t.Errorf("unplaced = %v", got)
	}
	if _, ok := g.Node("node-c"); ok {
		t.Error("node-c was not requested")
	}
	if n, _ := g.Node("gpu-a"); n.InstanceID != "i-01" || n.Region != "us-east-1" {
		t.Errorf("gpu-a = %+v", n)
	}
}

// TestExampleGolden checks the factory's example against a golden graph.
func TestExampleGolden(t *testing.T) {
	t.Parallel()
	f := k8slabels.NewFactory()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(f.Example), &n); err != nil {
		t.Fatal(err)
	}
	p, err := f.New(n.Content[0], "params", providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/example.golden.json", g)
}

func golden(t *testing.T, file string, g *topology.Graph) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, file, buf.Bytes(), *update)
}
