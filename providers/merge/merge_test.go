package merge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/infiniband"
	"github.com/toposcope/toposcope/providers/k8slabels"
	"github.com/toposcope/toposcope/providers/merge"
	"github.com/toposcope/toposcope/providers/nvlink"
	goldenfile "github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/testenv/proctest"
	"github.com/toposcope/toposcope/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var errUnknown = errors.New("unknown provider")

// lookup finds the providers these tests use, merge itself included, as
// the registry does.
func lookup(name string) (providers.Factory, error) {
	for _, f := range []providers.Factory{infiniband.NewFactory(), nvlink.NewFactory(), k8slabels.NewFactory(), merge.NewFactory(lookup)} {
		if f.Name == name {
			return f, nil
		}
	}
	return providers.Factory{}, fmt.Errorf("provider %q: %w", name, errUnknown)
}

func node(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return n.Content[0]
}

func build(t *testing.T, doc string) (providers.Provider, *proctest.Output) {
	t.Helper()
	logs := &proctest.Output{}
	p, err := merge.NewFactory(lookup).New(node(t, doc), "params", providers.Deps{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return p, logs
}

func path(g *topology.Graph, n string) []string {
	var out []string
	for _, s := range g.Path(n) {
		out = append(out, s.ID)
	}
	return out
}

const (
	uuid = "7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab"
	d1   = uuid + ".1"
	d2   = uuid + ".2"
)

func TestExample(t *testing.T) {
	t.Parallel()
	p, logs := build(t, merge.NewFactory(lookup).Example)
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if got := path(g, "gpu03"); !slices.Equal(got, []string{"nn-leaf-2", "nn-top"}) {
		t.Errorf("gpu03 path = %v", got)
	}
	if n, _ := g.Node("gpu01"); n.Domain != d1 {
		t.Errorf("gpu01 domain = %q", n.Domain)
	}
	if logs.String() != "" {
		t.Errorf("unexpected logs: %s", logs)
	}
	golden(t, "testdata/example.golden.json", g)
	// A stranger is unplaced, and reported as unknown to both sources.
	sub, err := p.Discover(context.Background(), providers.Request{Nodes: []providers.NodeRef{{Name: "gpu02"}, {Name: "stranger-0"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sub.Unplaced(), []string{"stranger-0"}) || len(sub.Nodes()) != 2 {
		t.Errorf("subset: nodes %v, unplaced %v", sub.Nodes(), sub.Unplaced())
	}
	if l := logs.String(); strings.Count(l, "stranger-0") != 2 || !strings.Contains(l, `source=k8s-labels`) || !strings.Contains(l, "source=nvlink") {
		t.Errorf("unknown node not reported per source:\n%s", l)
	}
}

// TestInfinibandAndNVLink merges the switch tree of real ibnetdiscover
// output (the infiniband example) with nvidia-smi CSV output.
func TestInfinibandAndNVLink(t *testing.T) {
	t.Parallel()
	ib := indent(infiniband.NewFactory().Example, "      ")
	p, _ := build(t, `sources:
  - provider: infiniband
    params:
`+ib+`
  - provider: nvlink
    params:
      outputs:
        node001: "`+uuid+`, 1\n"
        node002: "`+uuid+`, 1\n"
        node003: "`+uuid+`, 2\n"
        node004: "[N/A], [N/A]\n"
`)
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes()) != 4 || len(g.Switches()) == 0 || len(g.NodesWithoutSwitch()) != 0 {
		t.Fatalf("graph: %d nodes, %d switches, without switch %v", len(g.Nodes()), len(g.Switches()), g.NodesWithoutSwitch())
	}
	if d, ok := g.Domain(d1); !ok || !slices.Equal(d.Nodes, []string{"node001", "node002"}) {
		t.Errorf("domain %s = %+v", d1, d)
	}
	if n, _ := g.Node("node001"); n.Attributes["infiniband.hcas"] == "" {
		t.Errorf("infiniband attributes lost: %+v", n)
	}
	if !slices.Equal(g.NodesWithoutDomain(), []string{"node004"}) {
		t.Errorf("without domain = %v", g.NodesWithoutDomain())
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// labels returns a k8s-labels source of static nodes: each item is
// "name providerID layer1 layer2 [clique [rack]]" ("-" for none).
func labels(use string, items ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - provider: k8s-labels\n    use: [%s]\n    params:\n      subDomainLabel: example.com/rack\n      nodes:\n", use)
	for _, it := range items {
		f := append(strings.Fields(it), "-", "-", "-", "-", "-", "-")
		fmt.Fprintf(&b, "        - name: %s\n", f[0])
		if f[1] != "-" {
			fmt.Fprintf(&b, "          providerID: %s\n", f[1])
		}
		b.WriteString("          labels: {")
		var kv []string
		for i, k := range []string{k8slabels.AWSLayerPrefix + "1", k8slabels.AWSLayerPrefix + "2", nvlink.CliqueLabel, "example.com/rack"} {
			if v := f[2+i]; v != "-" {
				kv = append(kv, k+": "+v)
			}
		}
		b.WriteString(strings.Join(kv, ", ") + "}\n")
	}
	return b.String()
}

func TestMerge(t *testing.T) {
	t.Parallel()
	type check func(t *testing.T, g *topology.Graph)
	wantPath := func(n string, want ...string) check {
		return func(t *testing.T, g *topology.Graph) {
			t.Helper()
			if got := path(g, n); !slices.Equal(got, want) {
				t.Errorf("%s path = %v, want %v", n, got, want)
			}
		}
	}
	wantDomain := func(n, d, sub string) check {
		return func(t *testing.T, g *topology.Graph) {
			t.Helper()
			x, ok := g.Node(n)
			if !ok || x.Domain != d || x.SubDomain != sub {
				t.Errorf("%s = %+v, want domain %q/%q", n, x, d, sub)
			}
		}
	}
	wantNodes := func(names ...string) check {
		return func(t *testing.T, g *topology.Graph) {
			t.Helper()
			var got []string
			for _, n := range g.Nodes() {
				got = append(got, n.Name)
			}
			if !slices.Equal(got, names) {
				t.Errorf("nodes = %v, want %v", got, names)
			}
		}
	}
	tests := []struct {
		name   string
		doc    string
		checks []check
		logs   string
	}{
		{"tree from one, domains from the other",
			"sources:\n" + labels("tree", "a - t l1 "+d2, "b - t l2") + labels("domains", "a - x y "+d1, "b - - - "+d1+" r1"),
			[]check{wantPath("a", "l1", "t"), wantDomain("a", d1, ""), wantDomain("b", d1, "r1")}, ""},
		{"by instance ID",
			"sources:\n" + labels("tree", "gpu1 aws:///us-east-1a/i-1 t l1") + labels("domains", "ip-10-0-0-1 aws:///us-east-1a/i-1 - - "+d1),
			[]check{wantNodes("gpu1"), wantPath("gpu1", "l1", "t"), wantDomain("gpu1", d1, "")}, ""},
		{"by name only",
			"match: name\nunknownNodes: ignore\nsources:\n" + labels("tree", "gpu1 aws:///us-east-1a/i-1 t l1") + labels("domains", "ip-10-0-0-1 aws:///us-east-1a/i-1 - - "+d1),
			[]check{wantNodes("gpu1", "ip-10-0-0-1")}, ""},
		{"sub-domain from the second source",
			"sources:\n" + labels("domains", "a - - - "+d1) + labels("domains", "a - - - "+d1+" r1"),
			[]check{wantDomain("a", d1, "r1")}, ""},
		{"same domain twice is no conflict",
			"sources:\n" + labels("", "a - t l1 "+d1) + labels("", "a - t l1 "+d1),
			[]check{wantPath("a", "l1", "t"), wantDomain("a", d1, "")}, ""},
		{"conflicts: first keeps the earlier source",
			"conflicts: first\nsources:\n" + labels("", "a - t l1 "+d1+" r1") + labels("", "a - t l2 "+d2) + labels("domains", "a - - - "+d1+" r2"),
			[]check{wantPath("a", "l1", "t"), wantDomain("a", d1, "r1")}, "keeping the earlier source"},
		{"unknown node warned",
			"sources:\n" + labels("tree", "a - t l1", "b - t l1") + labels("domains", "a - - - "+d1),
			[]check{wantDomain("a", d1, "")}, `msg="merge: nodes unknown to a source, or placed nowhere by it" source=k8s-labels#1 count=1 nodes=b`},
		{"unknown node ignored for one source",
			"unknownNodes: error\nsources:\n" + labels("tree", "a - t l1", "b - t l1") + strings.Replace(labels("domains", "a - - - "+d1), "    use:", "    unknownNodes: ignore\n    use:", 1),
			[]check{wantDomain("a", d1, "")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, logs := build(t, tt.doc)
			g, err := p.Discover(context.Background(), providers.Request{})
			if err != nil {
				t.Fatalf("%v\n%s", err, tt.doc)
			}
			for _, c := range tt.checks {
				c(t, g)
			}
			if tt.logs == "" && logs.String() != "" || !strings.Contains(logs.String(), tt.logs) {
				t.Errorf("logs:\n%s\nwant %q", logs, tt.logs)
			}
		})
	}
}

// TestBadInput: conflicts and unknown nodes fail with an error naming the
// node and the sources, never a smaller topology.
func TestBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		doc   string
		want  error
		parts []string
	}{
		{"two domains", "sources:\n" + labels("", "a - - - "+d1) + labels("", "a - - - "+d2),
			merge.ErrConflict, []string{`node "a"`, d1, d2, `source "k8s-labels#0"`, `source "k8s-labels#1"`}},
		{"two sub-domains", "sources:\n" + labels("", "a - - - "+d1+" r1") + labels("", "a - - - "+d1+" r2"),
			merge.ErrConflict, []string{`node "a"`, `"r1"`, `"r2"`}},
		{"two leaves", "sources:\n" + labels("", "a - t l1") + labels("", "a - t l2"),
			merge.ErrConflict, []string{`node "a"`, `"l1"`, `"l2"`}},
		{"two instance IDs", "sources:\n" + labels("", "a aws:///us-east-1a/i-1 t l1") + labels("", "a aws:///us-east-1a/i-2 t l1"),
			merge.ErrConflict, []string{`node "a"`, "instance ID", `"i-1"`, `"i-2"`}},
		{"two nodes of one source match one", "sources:\n" + labels("", "a aws:///z/i-1 t l1") + labels("", "a - t l1", "b aws:///z/i-1 t l1"),
			merge.ErrConflict, []string{`node "a"`, `"b"`, "both match"}},
		{"a switch under two parents", "sources:\n" + labels("", "a - t1 l1") + labels("", "b - t2 l1"),
			topology.ErrTwoParents, []string{`"l1"`}},
		{"unknown node", "unknownNodes: error\nsources:\n" + labels("tree", "a - t l1", "b - t l1") + labels("domains", "a - - - "+d1),
			merge.ErrUnknownNode, []string{`source "k8s-labels#1"`, "1 nodes: b"}},
		{"a source fails", "sources:\n" + labels("", "a - - - "+d1) + labels("", "a - - - not-a-clique"),
			k8slabels.ErrBadLabel, []string{`source "k8s-labels#1"`, `node "a"`, nvlink.CliqueLabel}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, _ := build(t, tt.doc)
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
	src := "sources:\n  - provider: nvlink\n    params: {cliques: {a: " + d1 + "}}\n"
	tests := []struct {
		doc, field string
		want       error
	}{
		{"sources: []", "params.sources", config.ErrInvalid},
		{"noSuchKey: 1\n" + src, "params.noSuchKey", config.ErrInvalid},
		{"match: guess\n" + src, "params.match", config.ErrInvalid},
		{"conflicts: last\n" + src, "params.conflicts", config.ErrInvalid},
		{"unknownNodes: drop\n" + src, "params.unknownNodes", config.ErrInvalid},
		{"sources: [{provider: nvlink, use: [racks]}]", "params.sources[0].use[0]", config.ErrInvalid},
		{"sources: [{provider: nvlink, unknownNodes: x}]", "params.sources[0].unknownNodes", config.ErrInvalid},
		{"sources: [{use: [tree]}]", "params.sources[0].provider", config.ErrInvalid},
		{"sources: [{provider: nvlink, params: [1]}]", "params.sources[0].params", config.ErrInvalid},
		{"sources: [{provider: aws}]", "params.sources[0].provider", errUnknown},
		{"sources: [{provider: nvlink, params: {cliques: {a: bad}}}]", "params.sources[0].params.cliques.a", config.ErrInvalid},
		{"sources: [{provider: nvlink, params: {cliques: {a: " + d1 + "}}}, {name: nvlink, provider: k8s-labels}]", "params.sources[1].name", config.ErrInvalid},
		{"sources: [{provider: merge, params: {sources: [{provider: nvlink, params: {nope: 1}}]}}]", "params.sources[0].params.sources[0].params.nope", config.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			t.Parallel()
			_, err := merge.NewFactory(lookup).New(node(t, tt.doc), "params", providers.Deps{})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("New = %v, want %v on %s", err, tt.want, tt.field)
			}
		})
	}
}

func TestCancelled(t *testing.T) {
	t.Parallel()
	p, _ := build(t, merge.NewFactory(lookup).Example)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Discover(ctx, providers.Request{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Discover = %v", err)
	}
}

// TestNested merges a merge.
func TestNested(t *testing.T) {
	t.Parallel()
	p, _ := build(t, "sources:\n  - provider: merge\n    params:\n"+indent(merge.NewFactory(lookup).Example, "      ")+"\n")
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

// agentReports is a fixed set of agent reports, as the server's store
// would give them.
type agentReports []providers.AgentReport

func (a agentReports) AgentReports(context.Context) ([]providers.AgentReport, error) { return a, nil }

// TestSourcesGetDeps checks that the sources get the merge's
// dependencies: the agents source reads the reports from Deps.Agents.
func TestSourcesGetDeps(t *testing.T) {
	t.Parallel()
	ib := indent(infiniband.NewFactory().Example, "      ")
	now := time.Now()
	src := agentReports{
		{Facts: providers.NodeFacts{Node: "node001", GPUs: 4, Clique: uuid + ".1"}, ReceivedAt: now},
		{Facts: providers.NodeFacts{Node: "node002", GPUs: 4, Clique: uuid + ".1"}, ReceivedAt: now},
	}
	p, err := merge.NewFactory(lookupAgents).New(node(t, "sources:\n  - provider: infiniband\n    params:\n"+ib+"\n  - provider: agents\n"),
		"params", providers.Deps{Logger: slog.New(slog.DiscardHandler), Agents: src})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := g.Domain(d1); !ok || !slices.Equal(d.Nodes, []string{"node001", "node002"}) {
		t.Fatalf("domain %s from the agent reports = %+v (domains %+v)", d1, d, g.Domains())
	}
	if n, _ := g.Node("node001"); n.Leaf == "" {
		t.Errorf("node001 lost its switch: %+v", n)
	}
}
