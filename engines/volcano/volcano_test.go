package volcano_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/volcano"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	goldenfile "github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// env is the package's apiserver with Volcano's HyperNode CRD.
var env = kubetest.NewEnv(func(ctx context.Context, c *kubetest.Cluster) error {
	return c.InstallCRDs(ctx, "testdata/crds/hypernodes.yaml")
})

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

type setup struct {
	c       *kubetest.Cluster
	fabric  kubetest.Fabric
	counter *kubetest.Counter
}

func newSetup(t *testing.T, f kubetest.Fabric) *setup {
	t.Helper()
	c := env.Require(t)
	s := &setup{c: c, counter: kubetest.NewCounter()}
	s.fabric = c.CreateFabric(t, f)
	return s
}

func (s *setup) engine(t *testing.T, rc *rest.Config, mut ...func(*volcano.Config)) *volcano.Engine {
	t.Helper()
	cfg := volcano.DefaultConfig()
	cfg.Prefix = s.fabric.Prefix + "-hn-" // HyperNodes are cluster-scoped: keep tests apart
	cfg.NodeSelector = kubetest.Selector(s.fabric.Prefix)
	for _, m := range mut {
		m(&cfg)
	}
	clients, err := kubeclient.NewClients(s.counter.Instrument(cfg.Tune(rc)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := volcano.New(cfg, clients, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (s *setup) apply(t *testing.T, e *volcano.Engine, g *topology.Graph) (*kube.Result, kubetest.Stats) {
	t.Helper()
	s.counter.Reset()
	res, err := e.Apply(context.Background(), g, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res, s.counter.Stats()
}

// hyperNodes returns the test's HyperNodes by name.
func (s *setup) hyperNodes(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	list, err := s.c.Dynamic().Resource(volcano.Resource).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		if strings.HasPrefix(list.Items[i].GetName(), s.fabric.Prefix+"-hn-") {
			out[list.Items[i].GetName()] = &list.Items[i]
		}
	}
	return out
}

func members(o *unstructured.Unstructured) (kind string, names []string) {
	ms, _, _ := unstructured.NestedSlice(o.Object, "spec", "members")
	for _, m := range ms {
		mm := m.(map[string]any)
		kind = mm["type"].(string)
		names = append(names, mm["selector"].(map[string]any)["exactMatch"].(map[string]any)["name"].(string))
	}
	return kind, names
}

// TestHyperNodes: the real apiserver, with Volcano's CRD, accepts one
// HyperNode per switch, leaves at tier 1 listing their nodes and upper
// switches one tier up listing their children; a rerun writes nothing; a
// leaf whose nodes leave the graph loses its HyperNode and its spine is
// updated.
func TestHyperNodes(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 16, NodesPerLeaf: 4, LeavesPerSpine: 2})
	e := s.engine(t, s.c.AdminConfig())
	g := s.fabric.MustGraph(t)
	res, st := s.apply(t, e, g)
	// 4 leaves, 2 spines, 1 core.
	if res.Changed != 7 || st.ByVerb["create"] != 7 {
		t.Fatalf("first run: %s; %+v", res.Summary(), st)
	}
	hn := s.hyperNodes(t)
	p := s.fabric.Prefix
	for name, want := range map[string]struct {
		tier     int64
		tierName string
		kind     string
		members  []string
	}{
		p + "-hn-" + p + "-leaf001": {1, "tier-0", "Node", []string{s.fabric.NodeName(0), s.fabric.NodeName(1), s.fabric.NodeName(2), s.fabric.NodeName(3)}},
		p + "-hn-" + p + "-spine01": {2, "tier-1", "HyperNode", []string{p + "-hn-" + p + "-leaf001", p + "-hn-" + p + "-leaf002"}},
		p + "-hn-" + p + "-core":    {3, "tier-2", "HyperNode", []string{p + "-hn-" + p + "-spine01", p + "-hn-" + p + "-spine02"}},
	} {
		o := hn[name]
		if o == nil {
			t.Fatalf("no HyperNode %s among %d", name, len(hn))
		}
		tier, _, _ := unstructured.NestedInt64(o.Object, "spec", "tier")
		tierName, _, _ := unstructured.NestedString(o.Object, "spec", "tierName")
		kind, names := members(o)
		if tier != want.tier || tierName != want.tierName || kind != want.kind || strings.Join(names, ",") != strings.Join(want.members, ",") {
			t.Errorf("%s: tier %d %q, %s %v; want %d %q, %s %v", name, tier, tierName, kind, names, want.tier, want.tierName, want.kind, want.members)
		}
		if o.GetAnnotations()[keys.SwitchID] == "" {
			t.Errorf("%s has no %s", name, keys.SwitchID)
		}
	}

	res, st = s.apply(t, e, g)
	if st.Writes != 0 || res.Unchanged != 7 {
		t.Errorf("rerun: %s; %+v", res.Summary(), st)
	}

	// The last leaf's 4 nodes leave the graph: its HyperNode goes, spine02
	// is updated, the nodes are refused.
	f2 := s.fabric
	f2.Nodes = 12
	res, st = s.apply(t, e, f2.MustGraph(t))
	if st.ByVerb["delete"] != 1 || st.ByVerb["update"] != 1 || len(res.Refused) != 4 {
		t.Errorf("after a leaf left: %s; %+v, refused %v", res.Summary(), st, res.Refused)
	}
	if _, ok := s.hyperNodes(t)[p+"-hn-"+p+"-leaf004"]; ok {
		t.Error("leaf004's HyperNode is still there")
	}
}

// TestPagedLists: with a page size of 2 the nodes and the HyperNodes are
// both listed page by page, and a rerun still finds every HyperNode it
// wrote and writes nothing.
func TestPagedLists(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 8, NodesPerLeaf: 2, LeavesPerSpine: 2})
	e := s.engine(t, s.c.AdminConfig(), func(c *volcano.Config) { c.PageSize = 2 })
	g := s.fabric.MustGraph(t)
	if res, st := s.apply(t, e, g); res.Changed != 7 || st.ByVerb["create"] != 7 {
		t.Fatalf("first run: %s; %+v", res.Summary(), st)
	}
	res, st := s.apply(t, e, g)
	// 8 nodes and at least 7 HyperNodes, two per page.
	if st.Writes != 0 || res.Unchanged != 7 || st.ByVerb["list"] < 8 {
		t.Errorf("rerun: %s; %+v (want no writes, 7 unchanged, at least 8 list pages)", res.Summary(), st)
	}
}

// TestObjectNames: switch IDs that are not object names are lowercased
// and made unique with a hash of the ID.
func TestObjectNames(t *testing.T) {
	t.Parallel()
	b := topology.NewBuilder()
	b.AddNode(topology.Node{Name: "n1"})
	b.AddNode(topology.Node{Name: "n2"})
	b.AddPath("n1", []topology.SwitchInfo{{ID: "S-2c5eab0300B87B40"}})
	b.AddPath("n2", []topology.SwitchInfo{{ID: "s-2c5eab0300b87b40"}})
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, g)
	for _, want := range []string{"name: toposcope-s-2c5eab0300b87b40\n", "name: toposcope-s-2c5eab0300b87b40-"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
}

func render(t *testing.T, g *topology.Graph) string {
	t.Helper()
	return renderWith(t, g, "mode: print\n")
}

func renderWith(t *testing.T, g *topology.Graph, params string) string {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(params), &doc); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	e, err := volcano.NewFactory().New(doc.Content[0], "params", engines.Deps{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Publish(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestRBAC runs the engine with only charts/toposcope/rbac/volcano.yaml
// and checks each rule was needed.
func TestRBAC(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 8, NodesPerLeaf: 4, LeavesPerSpine: 2, Tiers: 2})
	rules, err := kubetest.LoadRules("../../charts/toposcope/rbac/volcano.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := s.c.ServiceAccountConfig(context.Background(), s.c.Namespace(t), "toposcope", rules.Cluster, rules.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	e := s.engine(t, rc)
	f2 := s.fabric
	f2.Nodes = 4
	for _, g := range []*topology.Graph{s.fabric.MustGraph(t), f2.MustGraph(t)} { // create, then update and delete
		if _, err := e.Apply(context.Background(), g, kube.ApplyOptions{}); err != nil {
			t.Fatalf("publish as the ServiceAccount: %v", err)
		}
	}
	if unused := rules.Unused(s.counter.Accesses()); len(unused) > 0 {
		t.Errorf("charts/toposcope/rbac/volcano.yaml grants permissions the engine never used: %v", unused)
	}
}

// TestRender: the printed HyperNodes of a switch tree, and of one with
// NVLink domains (one of them under two leaf switches), are the golden
// files.
func TestRender(t *testing.T) {
	t.Parallel()
	for file, f := range map[string]kubetest.Fabric{
		"render.yaml":         {Prefix: "r", Nodes: 4, NodesPerLeaf: 2, LeavesPerSpine: 2},
		"render-domains.yaml": {Prefix: "r", Nodes: 8, NodesPerLeaf: 4, LeavesPerSpine: 2, DomainSize: 3, DomainNodes: 7},
	} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			goldenfile.Check(t, filepath.Join("testdata", file), []byte(render(t, f.MustGraph(t))), *update)
		})
	}
}

// TestPrefixLength: the longest prefix accepted still gives every switch
// a valid object name (a 64-character switch name that needs its hash
// included, and a domain's); one character more is refused, naming
// prefix.
func TestPrefixLength(t *testing.T) {
	t.Parallel()
	cfg := volcano.DefaultConfig()
	cfg.Prefix = strings.Repeat("p", volcano.MaxPrefixLen)
	if err := cfg.Validate(); err != nil {
		t.Fatalf("prefix of %d: %v", volcano.MaxPrefixLen, err)
	}
	b := topology.NewBuilder()
	b.AddNode(topology.Node{Name: "n1"})
	b.AddNode(topology.Node{Name: "n2"})
	b.AddPath("n1", []topology.SwitchInfo{{ID: "S" + strings.Repeat("w", topology.MaxNameLen-1)}})
	b.AddPath("n2", []topology.SwitchInfo{{ID: "s2"}})
	// A 64-character domain under two leaves: its two HyperNodes' names
	// carry the domain infix and a hash.
	for _, n := range []string{"n1", "n2"} {
		b.AddToDomain(n, strings.Repeat("d", topology.MaxNameLen), "")
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	out := renderWith(t, g, "mode: print\nprefix: "+cfg.Prefix+"\n")
	for _, line := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "name: "+cfg.Prefix); ok {
			if msgs := validation.IsDNS1123Subdomain(cfg.Prefix + name); len(msgs) > 0 {
				t.Errorf("object name %s%s: %v", cfg.Prefix, name, msgs)
			}
		}
	}
	cfg.Prefix += "p"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "prefix") {
		t.Errorf("prefix of %d: err = %v, want one naming prefix", len(cfg.Prefix), err)
	}
}
