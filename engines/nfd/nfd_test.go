package nfd_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"os"
	"path/filepath"
	"slices"
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

// env is the package's apiserver with NFD's NodeFeature and
// NodeFeatureGroup CRDs.
var env = kubetest.NewEnv(func(ctx context.Context, c *kubetest.Cluster) error {
	return c.InstallCRDs(ctx, "testdata/crds/nodefeatures.yaml", "testdata/crds/nodefeaturegroups.yaml")
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
	return s.objects(t, nfd.Resource)
}

// objects lists the objects of resource r in NFD's namespace by name.
func (s *setup) objects(t *testing.T, r schema.GroupVersionResource) map[string]*unstructured.Unstructured {
	t.Helper()
	list, err := s.c.Dynamic().Resource(r).Namespace(s.ns).List(context.Background(), metav1.ListOptions{})
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
	e := s.engine(t, s.c.AdminConfig(), func(c *nfd.Config) { c.Groups = false })
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

	// A graph without the last 4 nodes: they are refused; without
	// cleanup their objects stay, with it (the default) they go.
	f3 := f2
	f3.Nodes = 28
	keep := s.engine(t, s.c.AdminConfig(), func(c *nfd.Config) { c.Groups, c.Cleanup = false, false })
	res, _ = s.apply(t, keep, f3.MustGraph(t))
	if len(res.Refused) != 4 || len(s.features(t)) != 32 {
		t.Errorf("shrunk graph, no cleanup: refused %v, %d objects", res.Refused, len(s.features(t)))
	}
	res, st = s.apply(t, e, f3.MustGraph(t))
	if len(res.Refused) != 4 || len(s.features(t)) != 28 || st.ByVerb["delete"] < 4 {
		t.Errorf("shrunk graph, cleanup: refused %v, %d objects, %+v", res.Refused, len(s.features(t)), st)
	}
	if _, gone := s.features(t)["toposcope-"+s.fabric.NodeName(31)]; gone {
		t.Errorf("the NodeFeature of %s, which left the graph, is still there", s.fabric.NodeName(31))
	}
	// A graph that places nothing changes nothing.
	if _, err := e.Apply(context.Background(), (kubetest.Fabric{Prefix: "other", Nodes: 2}).MustGraph(t), kube.ApplyOptions{}); !errors.Is(err, kube.ErrRefused) || len(s.features(t)) != 28 {
		t.Errorf("empty placement: %v, %d objects", err, len(s.features(t)))
	}
}

// groupsOf lists the NodeFeatureGroups by name.
func (s *setup) groupsOf(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	return s.objects(t, nfd.GroupResource)
}

// members evaluates a group's rules (element In values) on the written
// NodeFeatures, as nfd-master would, and returns the nodes it selects.
func members(t *testing.T, gr *unstructured.Unstructured, features map[string]*unstructured.Unstructured) []string {
	t.Helper()
	rules, _, _ := unstructured.NestedSlice(gr.Object, "spec", "featureGroupRules")
	var out []string
	for _, f := range features {
		el := elementsOf(f)
		for _, r := range rules {
			terms, _, _ := unstructured.NestedSlice(r.(map[string]any), "matchFeatures")
			all := len(terms) > 0
			for _, term := range terms {
				tm := term.(map[string]any)
				exprs, _, _ := unstructured.NestedMap(tm, "matchExpressions")
				if tm["feature"] != nfd.FeatureSet || len(exprs) == 0 {
					all = false
				}
				for k, x := range exprs {
					vals, _, _ := unstructured.NestedStringSlice(x.(map[string]any), "value")
					if x.(map[string]any)["op"] != "In" || !slices.Contains(vals, el[k]) {
						all = false
					}
				}
			}
			if all {
				out = append(out, f.GetLabels()[nfd.NodeNameLabel])
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestNodeFeatureGroups: a NodeFeatureGroup per switch and per NVLink
// domain, accepted by the real apiserver with NFD's CRD; each one's
// rules select exactly the nodes under that switch or in that domain;
// groups of a domain that is gone are deleted.
func TestNodeFeatureGroups(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 16, NodesPerLeaf: 4, LeavesPerSpine: 2, DomainSize: 4})
	e := s.engine(t, s.c.AdminConfig(), nil)
	g := s.fabric.MustGraph(t)
	s.apply(t, e, g)
	groups, features := s.groupsOf(t), s.features(t)
	if want := len(g.Switches()) + len(g.Domains()); len(groups) != want {
		t.Fatalf("%d groups, want %d (switches and domains)", len(groups), want)
	}
	checked := 0
	for _, gr := range groups {
		id := gr.GetAnnotations()[nfd.AnnotationGroupID]
		var want []string
		switch gr.GetAnnotations()[nfd.AnnotationGroupKind] {
		case "switch":
			for _, n := range g.Nodes() {
				for _, sw := range g.Path(n.Name) {
					if sw.ID == id {
						want = append(want, n.Name)
					}
				}
			}
		case "domain":
			d, _ := g.Domain(id)
			want = append(want, d.Nodes...)
		}
		slices.Sort(want)
		if got := members(t, gr, features); len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("group %s (%s) selects %v, want %v", gr.GetName(), id, got, want)
		}
		checked++
	}
	// Half the domains go: their groups are deleted, the others stay.
	f2 := s.fabric
	f2.DomainNodes = 8
	g2 := f2.MustGraph(t)
	s.apply(t, e, g2)
	if got, want := len(s.groupsOf(t)), len(g.Switches())+len(g2.Domains()); got != want || len(g2.Domains()) != 2 {
		t.Errorf("%d groups after half the domains went, want %d", got, want)
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
	f3 := f2
	f3.Nodes = 4
	// Create; update (a domain gone, a group edited by hand); delete (a
	// group and the nodes that left the graph).
	for i, g := range []*topology.Graph{s.fabric.MustGraph(t), f2.MustGraph(t), f3.MustGraph(t)} {
		if i == 1 {
			// Every group, so that whichever the second graph drops
			// (deleted), the ones it keeps are edited back (updated).
			for _, gr := range s.groupsOf(t) {
				gr.SetAnnotations(map[string]string{nfd.AnnotationGroupID: "edited"})
				if _, err := s.c.Dynamic().Resource(nfd.GroupResource).Namespace(s.ns).Update(context.Background(), gr, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := e.Apply(context.Background(), g, kube.ApplyOptions{}); err != nil {
			t.Fatalf("publish %d as the ServiceAccount: %v", i, err)
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

// TestDomainSourceLabel: with domainSourceLabel, a node that carries the
// label has its value as accelerator-domain (no sub-domain) and a group
// of that domain selects it (Topograph's acceleratorDomainSourceLabel on
// its nfd engine); the other nodes keep the graph's domain.
func TestDomainSourceLabel(t *testing.T) {
	t.Parallel()
	const src = "nvidia.com/gpu.clique"
	s := newSetup(t, kubetest.Fabric{Nodes: 8, NodesPerLeaf: 4, DomainSize: 4})
	first := s.fabric.NodeName(0)
	patch := []byte(`{"metadata":{"labels":{"` + src + `":"clique-x.1"}}}`)
	if _, err := s.c.Core().CoreV1().Nodes().Patch(context.Background(), first, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e := s.engine(t, s.c.AdminConfig(), func(c *nfd.Config) { c.DomainSourceLabel = src })
	g := s.fabric.MustGraph(t)
	s.apply(t, e, g)
	features := s.features(t)
	if el := elementsOf(features["toposcope-"+first]); el["accelerator-domain"] != "clique-x.1" || el["accelerator-subdomain"] != "" {
		t.Errorf("%s elements %v, want the source label's domain", first, el)
	}
	second := s.fabric.NodeName(1)
	if el := elementsOf(features["toposcope-"+second]); el["accelerator-domain"] != s.fabric.Prefix+"-nvl001" {
		t.Errorf("%s elements %v, want the graph's domain", second, el)
	}
	found := false
	for _, gr := range s.groupsOf(t) {
		if gr.GetAnnotations()[nfd.AnnotationGroupID] == "clique-x.1" {
			found = true
			if got := members(t, gr, features); !slices.Equal(got, []string{first}) {
				t.Errorf("group of clique-x.1 selects %v, want [%s]", got, first)
			}
		}
	}
	if !found {
		t.Error("no group for the source label's domain")
	}
}
