package nfd_test

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
	"k8s.io/client-go/rest"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/nfd"
	"github.com/toposcope/toposcope/internal/kubeclient"
	goldenfile "github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// env is the package's apiserver with NFD's NodeFeature CRD.
var env = kubetest.NewEnv(func(ctx context.Context, c *kubetest.Cluster) error {
	return c.InstallCRDs(ctx, "testdata/crds/nodefeatures.yaml")
})

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

type setup struct {
	c       *kubetest.Cluster
	ns      string
	fabric  kubetest.Fabric
	counter *kubetest.Counter
}

func newSetup(t *testing.T, f kubetest.Fabric) *setup {
	t.Helper()
	c := env.Require(t)
	s := &setup{c: c, ns: c.Namespace(t), counter: kubetest.NewCounter()}
	s.fabric = c.CreateFabric(t, f)
	return s
}

func (s *setup) engine(t *testing.T, rc *rest.Config, edit func(*nfd.Config)) *nfd.Engine {
	t.Helper()
	cfg := nfd.DefaultConfig()
	cfg.Namespace = s.ns
	cfg.NodeSelector = kubetest.Selector(s.fabric.Prefix)
	if edit != nil {
		edit(&cfg)
	}
	clients, err := kubeclient.NewClients(s.counter.Instrument(cfg.Tune(rc)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := nfd.New(cfg, clients, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (s *setup) apply(t *testing.T, e *nfd.Engine, g *topology.Graph) (*kube.Result, kubetest.Stats) {
	t.Helper()
	s.counter.Reset()
	res, err := e.Apply(context.Background(), g, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res, s.counter.Stats()
}

func (s *setup) features(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	list, err := s.c.Dynamic().Resource(nfd.Resource).Namespace(s.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		out[list.Items[i].GetName()] = &list.Items[i]
	}
	return out
}

func elementsOf(o *unstructured.Unstructured) map[string]string {
	el, _, _ := unstructured.NestedStringMap(o.Object, "spec", "features", "attributes", nfd.FeatureSet, "elements")
	return el
}

// TestNodeFeatures: the real apiserver, with NFD's CRD, accepts one
// NodeFeature per node holding its switch path and domain, owned by its
// Node; a rerun writes nothing; a changed domain rewrites only its nodes;
// a node the graph stops placing keeps its object and is refused.
func TestNodeFeatures(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 32, NodesPerLeaf: 8, LeavesPerSpine: 2, DomainSize: 8})
	e := s.engine(t, s.c.AdminConfig(), nil)
	g := s.fabric.MustGraph(t)
	res, st := s.apply(t, e, g)
	if res.Changed != 32 || st.ByVerb["create"] != 32 {
		t.Fatalf("first run: %s; %+v", res.Summary(), st)
	}
	objs := s.features(t)
	p := s.fabric.Prefix
	first := objs["toposcope-"+s.fabric.NodeName(0)]
	if first == nil {
		t.Fatalf("no NodeFeature for %s: %v", s.fabric.NodeName(0), objs)
	}
	el := elementsOf(first)
	want := map[string]string{"tier-0": p + "-leaf001", "tier-1": p + "-spine01", "tier-2": p + "-core", "accelerator-domain": p + "-nvl001"}
	for k, v := range want {
		if el[k] != v {
			t.Errorf("elements %v, want %v", el, want)
			break
		}
	}
	if refs := first.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "Node" || refs[0].Name != s.fabric.NodeName(0) || refs[0].UID == "" {
		t.Errorf("owner references %+v", refs)
	}
	if first.GetLabels()[nfd.NodeNameLabel] != s.fabric.NodeName(0) {
		t.Errorf("labels %v", first.GetLabels())
	}

	res, st = s.apply(t, e, g)
	if st.Writes != 0 || res.Unchanged != 32 {
		t.Errorf("rerun: %s; %+v", res.Summary(), st)
	}

	// The last domain goes away: its 8 nodes keep their switches and lose
	// the domain element.
	f2 := s.fabric
	f2.DomainNodes = 24
	res, st = s.apply(t, e, f2.MustGraph(t))
	if st.ByVerb["update"] != 8 || res.Changed != 8 {
		t.Errorf("after a change: %s; %+v, want 8 updates", res.Summary(), st)
	}

	// A graph without the last 4 nodes: they are refused, their objects stay.
	f3 := f2
	f3.Nodes = 28
	res, _ = s.apply(t, e, f3.MustGraph(t))
	if len(res.Refused) != 4 || len(s.features(t)) != 32 {
		t.Errorf("shrunk graph: refused %v, %d objects", res.Refused, len(s.features(t)))
	}
}

// TestLabelsRequested: with labels on, spec.labels carries the preset's
// node labels, which the CRD accepts.
func TestLabelsRequested(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 4, NodesPerLeaf: 4, DomainSize: 4})
	e := s.engine(t, s.c.AdminConfig(), func(c *nfd.Config) { c.Labels, c.Preset = true, kube.PresetTopographV1 })
	s.apply(t, e, s.fabric.MustGraph(t))
	o := s.features(t)["toposcope-"+s.fabric.NodeName(0)]
	labels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "labels")
	if labels["fabric.topograph.run/tier-0"] != s.fabric.Prefix+"-leaf001" || labels["accelerator.topograph.run/domain"] != s.fabric.Prefix+"-nvl001" {
		t.Errorf("spec.labels = %v", labels)
	}
}

// TestRBAC runs the engine with only charts/toposcope/rbac/nfd.yaml and
// checks each rule was needed.
func TestRBAC(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 8, NodesPerLeaf: 4, DomainSize: 4})
	rules, err := kubetest.LoadRules("../../charts/toposcope/rbac/nfd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := s.c.ServiceAccountConfig(context.Background(), s.ns, "toposcope", rules.Cluster, rules.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	e := s.engine(t, rc, nil)
	f2 := s.fabric
	f2.DomainNodes = 4
	for _, g := range []*topology.Graph{s.fabric.MustGraph(t), f2.MustGraph(t)} { // create, then update
		if _, err := e.Apply(context.Background(), g, kube.ApplyOptions{}); err != nil {
			t.Fatalf("publish as the ServiceAccount: %v", err)
		}
	}
	if unused := rules.Unused(s.counter.Accesses()); len(unused) > 0 {
		t.Errorf("charts/toposcope/rbac/nfd.yaml grants permissions the engine never used: %v", unused)
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	g := (kubetest.Fabric{Prefix: "r", Nodes: 4, NodesPerLeaf: 2, LeavesPerSpine: 2, DomainSize: 2}).MustGraph(t)
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("mode: print\n"), &doc); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	e, err := nfd.NewFactory().New(doc.Content[0], "params", engines.Deps{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Publish(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kind: NodeFeature") {
		t.Errorf("render:\n%s", out.String())
	}
	goldenfile.Check(t, filepath.Join("testdata", "render.yaml"), out.Bytes(), *update)
}
