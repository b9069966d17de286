package slinky

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/topology"
)

// env is the package's apiserver, owned by TestMain.
var env = kubetest.NewEnv()

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

type setup struct {
	c       *kubetest.Cluster
	ns      string
	fabric  kubetest.Fabric
	counter *kubetest.Counter
	engine  *Engine
}

func newSetup(t *testing.T, f kubetest.Fabric) *setup {
	t.Helper()
	c := env.Require(t)
	s := &setup{c: c, ns: c.Namespace(t), counter: kubetest.NewCounter()}
	f.Prefix = c.Prefix(t)
	s.fabric = f
	nodes := kubetest.NodeObjects(f.NodeNames(), map[string]string{kubetest.PrefixLabel: f.Prefix})
	if err := c.CreateNodes(context.Background(), nodes, 16); err != nil {
		t.Fatal(err)
	}
	// slurm-operator's NodeSet pods: one per node, hostname slinky-<i>.
	for i, n := range f.NodeNames() {
		createPod(t, c, s.ns, newSlurmdPod(fmt.Sprintf("slurm-worker-slinky-%d", i), n, fmt.Sprintf("slinky-%d", i)))
	}
	s.engine = s.newEngine(t, c.AdminConfig())
	return s
}

// slinkyName is the Slurm name newSetup gives node i of f.
func slinkyName(f kubetest.Fabric) func(string) string {
	idx := map[string]int{}
	for i, n := range f.NodeNames() {
		idx[n] = i
	}
	return func(n string) string { return fmt.Sprintf("slinky-%d", idx[n]) }
}

func (s *setup) newEngine(t *testing.T, rc *rest.Config) *Engine {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Namespace = s.ns
	cfg.NodeSelector = kubetest.Selector(s.fabric.Prefix)
	clients, err := kubeclient.NewClients(s.counter.Instrument(cfg.Tune(rc)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg, clients.Core, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (s *setup) apply(t *testing.T, g *topology.Graph) (*kube.Result, kubetest.Stats) {
	t.Helper()
	s.counter.Reset()
	res, err := s.engine.Apply(context.Background(), g, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res, s.counter.Stats()
}

func (s *setup) configMap(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	cm, err := s.c.Core().CoreV1().ConfigMaps(s.ns).Get(context.Background(), DefaultConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// TestConfigMapAndAnnotations: the dedicated ConfigMap holds exactly the
// slurm engine's topology.yaml, its nodes named by their slurmd pods,
// with its annotations; every node gets its
// dynamic topology string; a rerun writes nothing; a change rewrites the
// ConfigMap (generation 2) and only the nodes whose string changed.
func TestConfigMapAndAnnotations(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 72, NodesPerLeaf: 18, DomainSize: 18})
	g := s.fabric.MustGraph(t)
	res, st := s.apply(t, g)
	if res.Changed != 73 || st.Writes != 73 || st.ByVerb["create"] != 1 {
		t.Errorf("first run: %s; %+v", res.Summary(), st)
	}
	want, err := s.engine.slurm.Render(context.Background(), renamed(t, g, slinkyName(s.fabric)))
	if err != nil {
		t.Fatal(err)
	}
	cm := s.configMap(t)
	if cm.Data["topology.yaml"] != string(want) {
		t.Errorf("ConfigMap data:\n%s\nwant:\n%s", cm.Data["topology.yaml"], want)
	}
	if cm.Annotations[keys.Generation] != "1" || cm.Annotations[keys.ContentHash] != contentHash(want) ||
		cm.Annotations[keys.SourceSnapshot] != graphSnapshot(g) || cm.Labels[keys.ManagedBy] != "toposcope" {
		t.Errorf("ConfigMap metadata: %v %v", cm.Annotations, cm.Labels)
	}
	nodes, err := s.c.Core().CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: kubetest.Selector(s.fabric.Prefix)})
	if err != nil {
		t.Fatal(err)
	}
	p := s.fabric.Prefix
	for _, n := range nodes.Items {
		want := "default:" + p + "-core:" + p + "-spine01:" + p + "-leaf001,block:" + p + "-nvl001"
		if n.Name == s.fabric.NodeName(0) && n.Annotations[AnnotationSpec] != want {
			t.Errorf("node %s: %s = %q, want %q", n.Name, AnnotationSpec, n.Annotations[AnnotationSpec], want)
		}
		if n.Annotations[AnnotationSpec] == "" {
			t.Errorf("node %s has no %s", n.Name, AnnotationSpec)
		}
	}

	res, st = s.apply(t, g)
	if st.Writes != 0 || res.Changed != 0 || res.Unchanged != 73 {
		t.Errorf("rerun: %s; %+v", res.Summary(), st)
	}

	// Drop the last domain: the file changes, and so do the strings of its
	// 18 nodes (they keep their tree unit, lose their block).
	f2 := s.fabric
	f2.DomainNodes = 54
	res, st = s.apply(t, f2.MustGraph(t))
	if st.ByVerb["patch"] != 18 || st.ByVerb["update"] != 1 {
		t.Errorf("after a change: %s; %+v, want 1 update and 18 patches", res.Summary(), st)
	}
	if gen := s.configMap(t).Annotations[keys.Generation]; gen != "2" {
		t.Errorf("generation = %s, want 2", gen)
	}
}

// TestSkeletonOnlyAndNone: with skeleton-only the ConfigMap holds the
// units without nodes and is not rewritten when nodes come and go within
// them, while the nodes' annotations are; with none there is no
// ConfigMap at all.
func TestSkeletonOnlyAndNone(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 72, NodesPerLeaf: 18, DomainSize: 18})
	s.engine.cfg.ConfigUpdateMode = UpdateSkeleton
	g := s.fabric.MustGraph(t)
	res, st := s.apply(t, g)
	if res.Changed != 73 || st.ByVerb["create"] != 1 {
		t.Errorf("first run: %s; %+v", res.Summary(), st)
	}
	data := s.configMap(t).Data["topology.yaml"]
	if strings.Contains(data, "nodes") || !strings.Contains(data, s.fabric.Prefix+"-leaf004") {
		t.Errorf("skeleton ConfigMap:\n%s", data)
	}
	// One node fewer in the last leaf and domain: the units stay, so the
	// ConfigMap is not rewritten.
	f2 := s.fabric
	f2.Nodes = 71
	res, st = s.apply(t, f2.MustGraph(t))
	if st.ByVerb["update"] != 0 || s.configMap(t).Annotations[keys.Generation] != "1" {
		t.Errorf("skeleton rewritten after a node left: %s; %+v", res.Summary(), st)
	}

	n := newSetup(t, kubetest.Fabric{Nodes: 8, NodesPerLeaf: 4, DomainSize: 4})
	n.engine.cfg.ConfigUpdateMode = UpdateNone
	res, _ = n.apply(t, n.fabric.MustGraph(t))
	if res.Changed != 8 {
		t.Errorf("none: %s, want the 8 annotations", res.Summary())
	}
	_, err := n.c.Core().CoreV1().ConfigMaps(n.ns).Get(context.Background(), DefaultConfigMap, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("none wrote a ConfigMap: %v", err)
	}
}

// TestKeepsForeignContent: other keys and annotations of the dedicated
// ConfigMap survive an update.
func TestKeepsForeignContent(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 4})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: DefaultConfigMap, Namespace: s.ns, Annotations: map[string]string{"owner": "ops"}},
		Data: map[string]string{"topology.yaml": "old", "README": "hands off"}}
	if _, err := s.c.Core().CoreV1().ConfigMaps(s.ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, st := s.apply(t, s.fabric.MustGraph(t))
	if st.ByVerb["update"] != 1 {
		t.Errorf("%s; %+v", res.Summary(), st)
	}
	got := s.configMap(t)
	if got.Data["README"] != "hands off" || got.Annotations["owner"] != "ops" || got.Annotations[keys.Generation] != "1" {
		t.Errorf("ConfigMap after update: %v %v", got.Annotations, got.Data)
	}
}

// TestRefusesOperatorOwned: a ConfigMap owned by a Slinky Controller is
// never written.
func TestRefusesOperatorOwned(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 2})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: DefaultConfigMap, Namespace: s.ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "slinky.slurm.net/v1beta1", Kind: "Controller", Name: "slurm", UID: "1234"}}}}
	if _, err := s.c.Core().CoreV1().ConfigMaps(s.ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.counter.Reset()
	_, err := s.engine.Apply(context.Background(), s.fabric.MustGraph(t), kube.ApplyOptions{})
	if !errors.Is(err, ErrOperatorOwned) || s.counter.Stats().Writes != 0 {
		t.Errorf("Apply = %v with %d writes, want ErrOperatorOwned and none", err, s.counter.Stats().Writes)
	}
}

// TestRBAC runs the engine with only the rules of charts/toposcope/rbac/slinky.yaml
// and checks that each of them was needed.
func TestRBAC(t *testing.T) {
	t.Parallel()
	rules, err := kubetest.LoadRules("../../charts/toposcope/rbac/slinky.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := newSetup(t, kubetest.Fabric{Nodes: 8, DomainSize: 4})
	rc, err := s.c.ServiceAccountConfig(context.Background(), s.ns, "toposcope", rules.Cluster, rules.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	s.engine = s.newEngine(t, rc)
	var accesses []kubetest.Access
	for _, f := range []kubetest.Fabric{s.fabric, {Prefix: s.fabric.Prefix, Nodes: 8, DomainSize: 2}} {
		s.apply(t, f.MustGraph(t)) // create, then update
		accesses = append(accesses, s.counter.Accesses()...)
	}
	if unused := rules.Unused(accesses); len(unused) > 0 {
		t.Errorf("charts/toposcope/rbac/slinky.yaml grants permissions the engine never used: %v", unused)
	}
}
