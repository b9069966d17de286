package slinky

import (
	"context"
	"errors"
	"fmt"
	"k8s.io/apimachinery/pkg/types"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/slurm"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/testenv/slurmtest"
	"github.com/toposcope/toposcope/topology"
)

// newSlurmdPod is a pod as slurm-operator's NodeSet makes it: labelled
// app.kubernetes.io/component=worker, bound to node, with hostname host
// (none when empty).
func newSlurmdPod(name, node, host string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/component": "worker"}},
		Spec:       corev1.PodSpec{NodeName: node, Hostname: host, Containers: []corev1.Container{{Name: "slurmd", Image: "slurmd"}}},
	}
}

// createPod creates p in ns, and first ns's default ServiceAccount (the
// apiserver admits no pod without it, and there is no controller manager
// to make it); a phase is then written as its status (there is no
// kubelet: the test plays it).
func createPod(t *testing.T, c *kubetest.Cluster, ns string, p *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	if _, err := c.Core().CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	phase := p.Status.Phase
	got, err := c.Core().CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase != "" {
		got.Status.Phase = phase
		if _, err := c.Core().CoreV1().Pods(ns).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// renamed is g with node n renamed name(n): the graph a test expects the
// engine to render.
func renamed(t *testing.T, g *topology.Graph, name func(string) string) *topology.Graph {
	t.Helper()
	b := topology.NewBuilder()
	for _, n := range g.Nodes() {
		b.AddNode(topology.Node{Name: name(n.Name), GPUs: n.GPUs})
		var path []topology.SwitchInfo
		for _, s := range g.Path(n.Name) {
			path = append(path, topology.SwitchInfo{ID: s.ID})
		}
		if len(path) > 0 {
			b.AddPath(name(n.Name), path)
		}
		if n.Domain != "" {
			b.AddToDomain(name(n.Name), n.Domain, n.SubDomain)
		}
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSlurmName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		pod  corev1.Pod
		want string
	}{
		{"slurm.node.name wins", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{LabelSlurmNodeName: "gpu01", LabelPodHostname: "h"}},
			Spec: corev1.PodSpec{Hostname: "h"}}, "gpu01"},
		{"pod-hostname label", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{LabelPodHostname: "slinky-0"}}}, "slinky-0"},
		{"spec.hostname", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "slurm-worker-slinky-0"}, Spec: corev1.PodSpec{Hostname: "slinky-0"}}, "slinky-0"},
		{"pod name", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "slurm-worker-slinky-0"}}, "slurm-worker-slinky-0"},
		{"host network", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{HostNetwork: true, NodeName: "node7", Hostname: "h"}}, "node7"},
		{"empty label is kept (and refused later)", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{LabelSlurmNodeName: ""}}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := SlurmName(&tt.pod); got != tt.want {
				t.Errorf("SlurmName = %q, want %q", got, tt.want)
			}
		})
	}
}

// namesCase is a fabric of 8 nodes (two leaves of 4, one domain per
// leaf) whose slurmd pods exercise every rule: the expected Slurm names
// by node index, and the nodes left uncovered.
type namesCase struct {
	s         *setup
	names     map[int][]string
	uncovered []int
}

func newNamesCase(t *testing.T, plugin, version string) *namesCase {
	t.Helper()
	c := env.Require(t)
	f := kubetest.Fabric{Prefix: c.Prefix(t), Nodes: 8, NodesPerLeaf: 4, LeavesPerSpine: 2, Tiers: 2, DomainSize: 4}
	if err := c.CreateNodes(context.Background(), kubetest.NodeObjects(f.NodeNames(), map[string]string{kubetest.PrefixLabel: f.Prefix}), 8); err != nil {
		t.Fatal(err)
	}
	s := &setup{c: c, ns: c.Namespace(t), fabric: f, counter: kubetest.NewCounter()}
	pod := func(i int, name, host string) *corev1.Pod { return newSlurmdPod(name, f.NodeName(i), host) }
	p0 := pod(0, "w0", "ignored")
	p0.Labels[LabelSlurmNodeName] = "gpu-a1"
	p2 := pod(2, "slurm-worker-slinky-2", "")
	p4 := pod(4, "w4", "slinky-4")
	p4.Status.Phase = corev1.PodFailed
	p5 := pod(5, "w5", "slinky-5")
	p5.Spec.NodeName = ""
	p6 := pod(6, "w6", "slinky-6")
	p6.Labels = map[string]string{"app.kubernetes.io/component": "login"}
	p7 := pod(7, "w7", "slinky-7")
	p7.Spec.HostNetwork = true
	for _, p := range []*corev1.Pod{p0, pod(1, "w1", "slinky-1"), p2, pod(3, "w3b", "slinky-3b"), pod(3, "w3a", "slinky-3a"), p4, p5, p6, p7,
		newSlurmdPod("stray", f.Prefix+"-not-in-graph", "slinky-9")} {
		createPod(t, c, s.ns, p)
	}
	cfg := DefaultConfig()
	cfg.Namespace = s.ns
	cfg.NodeAnnotations = false
	cfg.Slurm.Plugin = plugin
	cfg.Slurm.SlurmVersion = version
	clients, err := kubeclient.NewClients(s.counter.Instrument(cfg.Tune(c.AdminConfig())))
	if err != nil {
		t.Fatal(err)
	}
	if s.engine, err = New(cfg, clients.Core, engines.Deps{}); err != nil {
		t.Fatal(err)
	}
	return &namesCase{s: s, uncovered: []int{4, 5, 6}, names: map[int][]string{
		0: {"gpu-a1"}, 1: {"slinky-1"}, 2: {"slurm-worker-slinky-2"}, 3: {"slinky-3a", "slinky-3b"}, 7: {f.NodeName(7)},
	}}
}

// slurmNames lists every expected Slurm name.
func (nc *namesCase) slurmNames() []string {
	var out []string
	for i := range nc.s.fabric.Nodes {
		out = append(out, nc.names[i]...)
	}
	return out
}

// TestSlurmNames: on the real apiserver, with slurmd Pod objects bound to
// the Nodes, the topology file names each node by its slurmd pods'
// Slurm names (label, hostname, pod name, host network; two pods on a
// node give two Slurm nodes); nodes whose pod finished, is not bound or
// is not selected are left out and listed in a warning, as are a graph
// node with no Kubernetes Node and the pod on a node the graph does not
// hold. No Kubernetes node name that is not
// also a Slurm name reaches the file.
func TestSlurmNames(t *testing.T) {
	t.Parallel()
	nc := newNamesCase(t, slurm.PluginTree, "24.11")
	s, f := nc.s, nc.s.fabric
	// The graph holds a ninth node, which has no Kubernetes Node.
	f9 := f
	f9.Nodes = 9
	res, _ := s.apply(t, f9.MustGraph(t))
	data := s.configMap(t).Data["topology.conf"]
	for _, want := range []string{
		"SwitchName=" + f.Prefix + "-leaf001 Nodes=gpu-a1,slinky-1,slinky-3a,slinky-3b,slurm-worker-slinky-2\n",
		"SwitchName=" + f.Prefix + "-leaf002 Nodes=" + f.NodeName(7) + "\n",
	} {
		if !strings.Contains(data, want) {
			t.Errorf("topology.conf lacks %q:\n%s", want, data)
		}
	}
	for i := range 7 {
		if strings.Contains(data, f.NodeName(i)) {
			t.Errorf("topology.conf names Kubernetes node %s:\n%s", f.NodeName(i), data)
		}
	}
	for _, want := range []string{
		fmt.Sprintf("3 nodes have no slurmd pod (namespace %s, podSelector %q) and are left out of the topology file: %s-n[00005-00007]", s.ns, DefaultPodSelector, f.Prefix),
		"1 slurmd pods are on Kubernetes nodes the graph does not hold, so their Slurm nodes are in no switch or block: stray on " + f.Prefix + "-not-in-graph",
		"1 graph nodes match no Kubernetes Node, so no slurmd pod, and are left out of the topology file: " + f.NodeName(8),
	} {
		if !slices.Contains(res.Warnings, want) {
			t.Errorf("warnings %q lack %q", res.Warnings, want)
		}
	}
	if len(res.Warnings) != 3 {
		t.Errorf("warnings %q, want 3", res.Warnings)
	}

	// A selector that takes no pod: no Slurm node to name, an error that
	// says so, and nothing written.
	cfg := s.engine.cfg
	cfg.PodSelector = "app.kubernetes.io/component=none"
	e, err := New(cfg, s.c.Kube(), engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Apply(context.Background(), f.MustGraph(t), kube.ApplyOptions{}); !errors.Is(err, engines.ErrInexpressible) || !strings.Contains(err.Error(), "none of the graph's 8 nodes has a slurmd pod") {
		t.Errorf("Apply with no slurmd pod = %v, want ErrInexpressible naming the cause", err)
	}
}

// TestSlurmNamesInSlurmctld: the file the engine wrote into the ConfigMap
// is loaded by the real slurmctld whose slurm.conf defines the Slurm
// names only (as the Slinky cluster's does): `scontrol show topology`
// places every one of them under its leaf (tree, 22.05) or in its block
// (block, 24.11), with no node lost.
func TestSlurmNamesInSlurmctld(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		plugin  string
		version slurmtest.Version
	}{
		{slurm.PluginTree, slurmtest.V2205},
		{slurm.PluginBlock, slurmtest.V2411},
	} {
		t.Run(tt.plugin, func(t *testing.T) {
			t.Parallel()
			slurmtest.Require(t, tt.version)
			nc := newNamesCase(t, tt.plugin, string(tt.version))
			s, f := nc.s, nc.s.fabric
			s.apply(t, f.MustGraph(t))
			conf := s.configMap(t).Data["topology.conf"]
			ctx := context.Background()
			c, err := slurmtest.Start(ctx, t, slurmtest.Options{Version: tt.version, Plugin: tt.plugin, Nodes: nc.slurmNames(), Topology: conf})
			if err != nil {
				t.Fatalf("slurmctld %s refused the file:\n%s\n%v", tt.version, conf, err)
			}
			out, err := c.ShowTopology(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sws, blocks, err := slurmtest.ParseTopology(out)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{} // unit -> its nodes as slurmctld prints them
			for _, sw := range sws {
				got[sw.Name] = sw.Nodes
			}
			for _, b := range blocks {
				if !b.Aggregated {
					got[b.Name] = b.Nodes
				}
			}
			unit := func(i int) string { return f.Leaf(i) }
			if tt.plugin == slurm.PluginBlock {
				unit = f.Domain
			}
			want := map[string][]string{}
			for i := range f.Nodes {
				want[unit(i)] = append(want[unit(i)], nc.names[i]...)
			}
			for u, names := range want {
				gotNames, err := hostlist.Expand(got[u])
				if err != nil {
					t.Fatalf("expand %q: %v", got[u], err)
				}
				slices.Sort(gotNames)
				slices.Sort(names)
				if !slices.Equal(gotNames, names) {
					t.Errorf("slurmctld %s puts %v in %s, want %v\n%s", tt.version, gotNames, u, names, out)
				}
			}
		})
	}
}

// TestDomainSourceLabel: with domainSourceLabel, the blocks are the
// Kubernetes nodes' clique labels, not the graph's domains (Topograph's
// acceleratorDomainSourceLabel on its slinky engine); a node without the
// label is in no block and named in a warning; slurmctld 24.11 loads the
// file.
func TestDomainSourceLabel(t *testing.T) {
	t.Parallel()
	slurmtest.Require(t, slurmtest.V2411)
	const src = "nvidia.com/gpu.clique"
	nc := newNamesCase(t, slurm.PluginBlock, "24.11")
	s, f := nc.s, nc.s.fabric
	for i, clique := range map[int]string{0: "clique-a.1", 1: "clique-a.1", 2: "clique-b.1", 3: "clique-b.1"} {
		patch := []byte(`{"metadata":{"labels":{"` + src + `":"` + clique + `"}}}`)
		if _, err := s.c.Core().CoreV1().Nodes().Patch(context.Background(), f.NodeName(i), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := s.engine.cfg
	cfg.DomainSourceLabel = src
	e, err := New(cfg, s.c.Kube(), engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	s.engine = e
	res, _ := s.apply(t, f.MustGraph(t))
	conf := s.configMap(t).Data["topology.conf"]
	// Block names are the labels made safe (SafeName), the label in the
	// comment above.
	for _, want := range []string{
		" = \"clique-a.1\"\nBlockName=clique-a-1-", "Nodes=gpu-a1,slinky-1\n",
		" = \"clique-b.1\"\nBlockName=clique-b-1-", "Nodes=slinky-3a,slinky-3b,slurm-worker-slinky-2\n",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("topology.conf lacks %q:\n%s", want, conf)
		}
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "lack the label "+src) && strings.Contains(w, f.NodeName(7))
	}) {
		t.Errorf("no warning names the unlabelled node: %q", res.Warnings)
	}
	ctx := context.Background()
	if _, err := slurmtest.Start(ctx, t, slurmtest.Options{Version: slurmtest.V2411, Plugin: slurmtest.PluginBlock, Nodes: nc.slurmNames(), Topology: conf}); err != nil {
		t.Fatalf("slurmctld 24.11 refused the file:\n%s\n%v", conf, err)
	}
}
