package k8slabels_test

import (
	"context"
	"errors"
	"fmt"
	"k8s.io/apimachinery/pkg/types"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/k8slabels"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/testenv/consumertest"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/topology"
)

// env is the package's apiserver, owned by TestMain.
var env = kubetest.NewEnv()

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

const (
	tier      = "topology.toposcope.io/tier-"
	domainKey = "topology.toposcope.io/accelerator-domain"
)

// setup creates the fabric's nodes, labelled with the test's prefix and
// with extra labels, and returns an engine (with cfg edited by edit)
// whose client goes through a fresh counter.
type setup struct {
	c       *kubetest.Cluster
	prefix  string
	fabric  kubetest.Fabric
	counter *kubetest.Counter
	engine  *k8slabels.Engine
}

func newSetup(t testing.TB, f kubetest.Fabric, extra func(i int, n *corev1.Node), edit func(*k8slabels.Config)) *setup {
	t.Helper()
	c := env.Require(t)
	s := &setup{c: c, prefix: c.Prefix(t), counter: kubetest.NewCounter()}
	f.Prefix = s.prefix
	s.fabric = f
	nodes := kubetest.NodeObjects(f.NodeNames(), map[string]string{kubetest.PrefixLabel: s.prefix, "team": "ml"})
	for i, n := range nodes {
		if extra != nil {
			extra(i, n)
		}
	}
	if err := c.CreateNodes(context.Background(), nodes, 32); err != nil {
		t.Fatal(err)
	}
	s.engine = s.newEngine(t, c.AdminConfig(), edit)
	return s
}

func (s *setup) newEngine(t testing.TB, rc *rest.Config, edit func(*k8slabels.Config)) *k8slabels.Engine {
	t.Helper()
	cfg := k8slabels.DefaultConfig()
	cfg.NodeSelector = kubetest.Selector(s.prefix)
	if edit != nil {
		edit(&cfg)
	}
	clients, err := kubeclient.NewClients(s.counter.Instrument(cfg.Tune(rc)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := k8slabels.New(cfg, clients.Core, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (s *setup) graph(t testing.TB) *topology.Graph {
	t.Helper()
	g, err := s.fabric.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// nodes returns the test's nodes by name.
func (s *setup) nodes(t testing.TB) map[string]corev1.Node {
	t.Helper()
	list, err := s.c.Core().CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: kubetest.Selector(s.prefix)})
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]corev1.Node, len(list.Items))
	for _, n := range list.Items {
		out[n.Name] = n
	}
	return out
}

// apply runs the engine and returns the result and the requests it sent.
func (s *setup) apply(t testing.TB, g *topology.Graph, opts kube.ApplyOptions) (*kube.Result, kubetest.Stats, error) {
	t.Helper()
	s.counter.Reset()
	res, err := s.engine.Apply(context.Background(), g, opts)
	return res, s.counter.Stats(), err
}

// TestLabels1000 is the main scenario on 1,000 nodes: correct labels,
// stale managed labels removed, foreign ones untouched, one paged LIST and
// one PATCH per changed node, zero writes on a second run, and exactly the
// changed nodes written after a change.
func TestLabels1000(t *testing.T) {
	t.Parallel()
	f := kubetest.Fabric{Nodes: 1000, DomainSize: 8, SubDomainSize: 4, DomainNodes: 800}
	s := newSetup(t, f, func(i int, n *corev1.Node) {
		if i%10 == 0 {
			n.Labels[tier+"7"] = "stale"                                 // a tier the fabric no longer has
			n.Labels["topology.toposcope.io/accelerator-domain"] = "old" // wrong, or stale past node 800
			n.Labels["topology.toposcope.io/owner"] = "someone"          // same prefix, not managed
		}
	}, nil)
	g := s.graph(t)
	res, st, err := s.apply(t, g, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed != 1000 || res.Unchanged != 0 || len(res.Refused) != 0 {
		t.Errorf("first run: %s", res.Summary())
	}
	if st.Lists != 1 || st.ByVerb["patch"] != 1000 || st.Requests != st.ByVerb["list"]+1000 {
		t.Errorf("first run requests = %+v, want one paged LIST and 1000 PATCH", st)
	}
	nodes := s.nodes(t)
	for i := range f.Nodes {
		n := nodes[s.fabric.NodeName(i)]
		want := map[string]string{tier + "0": s.fabric.Leaf(i), tier + "1": s.fabric.Spine(i), tier + "2": s.fabric.Core(), "team": "ml"}
		if d := s.fabric.Domain(i); d != "" {
			want["topology.toposcope.io/accelerator-domain"] = d
			want["topology.toposcope.io/accelerator-subdomain"] = s.fabric.SubDomain(i)
		}
		if i%10 == 0 {
			want["topology.toposcope.io/owner"] = "someone"
		}
		for k, v := range want {
			if n.Labels[k] != v {
				t.Fatalf("node %s: label %s = %q, want %q (labels %v)", n.Name, k, n.Labels[k], v, n.Labels)
			}
		}
		if _, ok := n.Labels[tier+"7"]; ok {
			t.Fatalf("node %s: stale %s7 kept", n.Name, tier)
		}
		if i >= 800 && n.Labels["topology.toposcope.io/accelerator-domain"] != "" {
			t.Fatalf("node %s: stale accelerator-domain kept", n.Name)
		}
	}

	res, st, err = s.apply(t, g, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Writes != 0 || st.Lists != 1 || st.Requests != st.ByVerb["list"] || res.Changed != 0 || res.Unchanged != 1000 {
		t.Errorf("second run: %s; requests %+v, want one paged LIST and no write", res.Summary(), st)
	}

	// Move the last 8 nodes into a new domain: exactly 8 patches.
	f2 := s.fabric
	f2.DomainNodes = 808
	g2, err := f2.Graph()
	if err != nil {
		t.Fatal(err)
	}
	res, st, err = s.apply(t, g2, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Writes != 8 || res.Changed != 8 {
		t.Errorf("after a change: %s; requests %+v, want 8 writes", res.Summary(), st)
	}
}

// TestShrinkGuard: nodes missing from a partial graph, or unplaced in it,
// keep their labels; a guard can refuse the whole publish.
func TestShrinkGuard(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 64}, nil, nil)
	if _, _, err := s.apply(t, s.graph(t), kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// A partial discovery: the provider answered for the first 32 nodes
	// only, and left node 0 unplaced.
	b := topology.NewBuilder()
	for i := range 32 {
		name := s.fabric.NodeName(i)
		b.AddNode(topology.Node{Name: name})
		if i > 0 {
			b.AddPath(name, []topology.SwitchInfo{{ID: "other-leaf"}, {ID: "other-core"}})
		}
	}
	partial, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	refuse := func(_ context.Context, g *topology.Graph, plan *kube.Result) error {
		if len(plan.Refused) > len(g.Nodes())/10 {
			return fmt.Errorf("%d of the cluster's nodes are not placed by the discovery", len(plan.Refused))
		}
		return nil
	}
	res, st, err := s.apply(t, partial, kube.ApplyOptions{Guard: refuse})
	if !errors.Is(err, kube.ErrRefused) || st.Writes != 0 {
		t.Fatalf("guarded publish = %v, %d writes; want ErrRefused and no write", err, st.Writes)
	}
	if len(res.Refused) != 33 {
		t.Errorf("refused = %d nodes, want 33", len(res.Refused))
	}
	// Without the guard, only the 31 placed nodes are relabelled.
	res, st, err = s.apply(t, partial, kube.ApplyOptions{})
	if err != nil || st.Writes != 31 || len(res.Refused) != 33 {
		t.Fatalf("unguarded: %v, %d writes, %s", err, st.Writes, res.Summary())
	}
	nodes := s.nodes(t)
	for i := range 64 {
		n := nodes[s.fabric.NodeName(i)]
		want := s.fabric.Leaf(i)
		if i > 0 && i < 32 {
			want = "other-leaf"
		}
		if n.Labels[tier+"0"] != want {
			t.Errorf("node %s: tier-0 = %q, want %q", n.Name, n.Labels[tier+"0"], want)
		}
	}
}

// TestSanitizedValues: IDs that are not label values are shortened with a
// hash, accepted by the apiserver, and kept in full in annotations.
func TestSanitizedValues(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 4}, nil, nil)
	long := strings.Repeat("spine-0123456789", 6)
	b := topology.NewBuilder()
	for i := range 4 {
		name := s.fabric.NodeName(i)
		b.AddNode(topology.Node{Name: name})
		b.AddPath(name, []topology.SwitchInfo{{ID: "MF0;sw-01:MQM9700/U1"}, {ID: long}})
		b.AddToDomain(name, "7b968a6d-c8aa-45e1-9e07-e1e51be99c31.1", "")
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.apply(t, g, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range s.nodes(t) {
		for _, k := range []string{tier + "0", tier + "1", "topology.toposcope.io/accelerator-domain"} {
			v := n.Labels[k]
			if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 || v == "" {
				t.Errorf("node %s: %s = %q: %v", n.Name, k, v, msgs)
			}
		}
		if n.Annotations[tier+"0"] != "MF0;sw-01:MQM9700/U1" || n.Annotations[tier+"1"] != long {
			t.Errorf("node %s: annotations %v do not keep the full IDs", n.Name, n.Annotations)
		}
	}
}

// TestTopographPresetAndMapping: Topograph v1 keys, and nodes matched by
// spec.providerID and the hostname label rather than by name.
func TestTopographPresetAndMapping(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 3}, nil, func(c *k8slabels.Config) { c.Preset = kube.PresetTopographV1 })
	ctx := context.Background()
	p := s.prefix
	extra := []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: p + "-ip-10-0-0-1", Labels: map[string]string{kubetest.PrefixLabel: p}}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-0abc"}},
		{ObjectMeta: metav1.ObjectMeta{Name: p + "-fqdn.example.com", Labels: map[string]string{kubetest.PrefixLabel: p, "kubernetes.io/hostname": p + "-short"}}},
	}
	if err := s.c.CreateNodes(ctx, extra, 2); err != nil {
		t.Fatal(err)
	}
	b := topology.NewBuilder()
	b.AddNode(topology.Node{Name: p + "-aws1", InstanceID: "i-0abc", Region: "us-east-1"})
	b.AddNode(topology.Node{Name: p + "-short"})
	for _, n := range []string{p + "-aws1", p + "-short"} {
		b.AddPath(n, []topology.SwitchInfo{{ID: "leaf"}, {ID: "spine"}})
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := s.apply(t, g, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed != 2 || len(res.Refused) != 3 {
		t.Errorf("%s", res.Summary())
	}
	nodes := s.nodes(t)
	for _, name := range []string{p + "-ip-10-0-0-1", p + "-fqdn.example.com"} {
		if l := nodes[name].Labels; l["fabric.topograph.run/tier-0"] != "leaf" || l["fabric.topograph.run/tier-1"] != "spine" {
			t.Errorf("node %s: labels %v", name, l)
		}
	}
}

// TestDryRun: the plan is reported, nothing is written.
func TestDryRun(t *testing.T) {
	t.Parallel()
	s := newSetup(t, kubetest.Fabric{Nodes: 20}, nil, nil)
	res, st, err := s.apply(t, s.graph(t), kube.ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Writes != 0 || res.Changed != 20 || !res.DryRun || len(res.Changes) != 20 {
		t.Errorf("dry run: %s, %d writes", res.Summary(), st.Writes)
	}
	if got := res.Changes[0].String(); !strings.HasPrefix(got, "patch Node/"+s.fabric.NodeName(0)+": set label "+tier+"0=") {
		t.Errorf("change = %q", got)
	}
	for _, n := range s.nodes(t) {
		if _, ok := n.Labels[tier+"0"]; ok {
			t.Fatalf("dry run wrote node %s", n.Name)
		}
	}
}

// TestLLDPLeafLabels: the Ethernet fabric built from the hosts' real
// lldpcli output (two rails, leaf groups with no switch above them) is
// published as tier-0 labels on the real apiserver: the nodes of one leaf
// group share a value, the two groups differ, and the host with a link
// down has its group's.
func TestLLDPLeafLabels(t *testing.T) {
	t.Parallel()
	labels := applyHosts(t, consumertest.LLDPHosts, consumertest.LLDPGraph)
	group := map[string]string{}
	for h, l := range labels {
		group[h] = l[tier+"0"]
	}
	if group["h1"] == "" || group["h1"] != group["h2"] || group["h1"] != group["h5"] || group["h3"] != group["h4"] || group["h1"] == group["h3"] {
		t.Errorf("tier-0 labels by host: %v; want h1, h2, h5 alike, h3, h4 alike, the two groups apart", group)
	}
	if _, ok := labels["h1"][tier+"1"]; ok {
		t.Error("a tier-1 label, but the hosts see no switch above their leaves")
	}
}

// TestLLDPFatTreeLabels: the 3-tier Ethernet fat tree the lldp provider
// discovers from the real lldpd's and snmpd's saved answers is published
// as three tiers of labels on the real apiserver: h1 and h2 share their
// leaf group, h3 has its own under the same spine group, h4 is in the
// other pod, and all four share the core.
func TestLLDPFatTreeLabels(t *testing.T) {
	t.Parallel()
	labels := applyHosts(t, consumertest.FatTreeHosts, consumertest.FatTreeGraph)
	same := func(level, a, b string) bool {
		return labels[a][tier+level] != "" && labels[a][tier+level] == labels[b][tier+level]
	}
	checks := []struct {
		level, a, b string
		want        bool
	}{
		{"0", "h1", "h2", true}, {"0", "h1", "h3", false}, {"0", "h3", "h4", false},
		{"1", "h1", "h3", true}, {"1", "h1", "h4", false},
		{"2", "h1", "h4", true}, {"2", "h2", "h3", true},
	}
	for _, c := range checks {
		if got := same(c.level, c.a, c.b); got != c.want {
			t.Errorf("tier-%s labels of %s and %s alike = %v, want %v (labels %v)", c.level, c.a, c.b, got, c.want, labels)
		}
	}
}

// applyHosts publishes, on a fabric of len(hosts) nodes on the real
// apiserver, the graph that graph builds for hosts under those nodes'
// names, and returns each host's labels.
func applyHosts(t *testing.T, hosts []string, graph func(name func(string) string) (*topology.Graph, error)) map[string]map[string]string {
	t.Helper()
	s := newSetup(t, kubetest.Fabric{Nodes: len(hosts)}, nil, nil)
	host := map[string]string{}
	g, err := graph(func(h string) string {
		i := slices.Index(hosts, h)
		host[s.fabric.NodeName(i)] = h
		return s.fabric.NodeName(i)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.apply(t, g, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]map[string]string{}
	for name, n := range s.nodes(t) {
		labels[host[name]] = n.Labels
	}
	return labels
}

// TestDomainSourceLabel: with domainSourceLabel, a node that carries the
// source label (nvidia.com/gpu.clique) gets no accelerator domain label
// from the graph and loses the one it had; the others keep theirs; the
// source label is untouched (Topograph's acceleratorDomainSourceLabel on
// its k8s engine).
func TestDomainSourceLabel(t *testing.T) {
	t.Parallel()
	const src = "nvidia.com/gpu.clique"
	s := newSetup(t, kubetest.Fabric{Nodes: 8, NodesPerLeaf: 4, DomainSize: 4}, nil, nil)
	g := s.graph(t)
	if _, _, err := s.apply(t, g, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	first := s.fabric.NodeName(0)
	if s.nodes(t)[first].Labels[domainKey] == "" {
		t.Fatalf("no domain label written at first: %v", s.nodes(t)[first].Labels)
	}
	patch := []byte(`{"metadata":{"labels":{"` + src + `":"clique-a.1"}}}`)
	if _, err := s.c.Core().CoreV1().Nodes().Patch(context.Background(), first, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	s.engine = s.newEngine(t, s.c.AdminConfig(), func(c *k8slabels.Config) { c.DomainSourceLabel = src })
	if _, _, err := s.apply(t, g, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	nodes := s.nodes(t)
	if l := nodes[first].Labels; l[domainKey] != "" || l[src] != "clique-a.1" || l[tier+"0"] == "" {
		t.Errorf("node with the source label: %v; want no domain label, the source kept, its tiers", l)
	}
	if l := nodes[s.fabric.NodeName(1)].Labels; l[domainKey] == "" {
		t.Errorf("node without the source label lost its domain: %v", l)
	}
}
