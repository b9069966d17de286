package k8slabels_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/k8slabels"
	"github.com/toposcope/toposcope/providers/nvlink"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// env is the package's apiserver, owned by TestMain.
var env = kubetest.NewEnv()

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// clusterProvider creates nodes (labelled with the test's prefix) on the
// real apiserver and returns a provider that lists them through rc (the
// admin configuration when nil), two per page.
func clusterProvider(t *testing.T, c *kubetest.Cluster, prefix string, rc *rest.Config, nodes map[string]map[string]string) *k8slabels.Provider {
	t.Helper()
	var objs []*corev1.Node
	for name, labels := range nodes {
		obj := kubetest.NodeObjects([]string{name}, with(labels, kubetest.PrefixLabel, prefix))[0]
		obj.Spec.ProviderID = "aws:///us-east-1a/i-" + name
		objs = append(objs, obj)
	}
	if len(objs) > 0 {
		if err := c.CreateNodes(context.Background(), objs, 4); err != nil {
			t.Fatal(err)
		}
	}
	if rc == nil {
		rc = c.AdminConfig()
	}
	cfg := k8slabels.DefaultConfig()
	cfg.NodeSelector = kubetest.Selector(prefix)
	cfg.PageSize = 2
	clients, err := kubeclient.NewClients(cfg.Tune(rc))
	if err != nil {
		t.Fatal(err)
	}
	p, err := k8slabels.New(cfg, clients.Core, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCluster reads EKS, GKE and clique labels from Nodes on the real
// kube-apiserver, page by page, with a service account that may only
// list Nodes.
func TestCluster(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	prefix := c.Prefix(t)
	ns := c.Namespace(t)
	rc, err := c.ServiceAccountConfig(context.Background(), ns, "reader",
		[]rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := func(s string) string { return prefix + "-" + s }
	p := clusterProvider(t, c, prefix, rc, map[string]map[string]string{
		n("a1"): with(aws(n("top"), n("spine"), n("leaf1")), nvlink.CliqueLabel, clique),
		n("a2"): with(aws(n("top"), n("spine"), n("leaf1")), nvlink.CliqueLabel, clique),
		n("a3"): aws(n("top"), n("spine"), n("leaf2"), n("x4")),
		n("g1"): {k8slabels.GKEBlockLabel: n("block"), k8slabels.GKESubblockLabel: n("sub")},
		n("z1"): {"team": "ml"},
	})
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes()) != 5 {
		t.Fatalf("nodes = %d, want 5 (paging)", len(g.Nodes()))
	}
	checks := map[string][]string{
		n("a1"): {n("leaf1"), n("spine"), n("top")},
		n("a3"): {n("x4"), n("leaf2"), n("spine"), n("top")},
		n("g1"): {n("sub"), n("block")},
		n("z1"): nil,
	}
	for node, want := range checks {
		if got := path(g, node); !slices.Equal(got, want) {
			t.Errorf("%s: path %v, want %v", node, got, want)
		}
	}
	d, ok := g.Domain(clique)
	if !ok || !slices.Equal(d.Nodes, []string{n("a1"), n("a2")}) {
		t.Errorf("domain %s = %+v", clique, d)
	}
	if a1, _ := g.Node(n("a1")); a1.InstanceID != "i-"+n("a1") || a1.Zone != "us-east-1a" {
		t.Errorf("instance of a1 = %+v", a1)
	}
	sub, err := p.Discover(context.Background(), providers.Request{Nodes: []providers.NodeRef{{Name: "other", InstanceID: "i-" + n("g1")}, {Name: "stranger"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := path(sub, "other"); !slices.Equal(got, []string{n("sub"), n("block")}) || !slices.Equal(sub.Unplaced(), []string{"stranger"}) {
		t.Errorf("by instance ID: path %v, unplaced %v", got, sub.Unplaced())
	}
}

// TestClusterBadLabel: a clique label that the apiserver accepts but that
// does not parse fails the discovery, naming the node and the key.
func TestClusterBadLabel(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	prefix := c.Prefix(t)
	p := clusterProvider(t, c, prefix, nil, map[string]map[string]string{
		prefix + "-ok":  {nvlink.CliqueLabel: clique},
		prefix + "-bad": {nvlink.CliqueLabel: "cluster-1.7"},
	})
	_, err := p.Discover(context.Background(), providers.Request{})
	if !errors.Is(err, k8slabels.ErrBadLabel) {
		t.Fatalf("Discover = %v, want ErrBadLabel", err)
	}
	for _, part := range []string{`node "` + prefix + `-bad"`, nvlink.CliqueLabel, "cluster-1.7"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not mention %q", err, part)
		}
	}
}

// TestClusterUnavailable: a list the apiserver refuses (an unknown
// token: 401) is ErrAuth, which the server answers 403 provider_auth,
// not an empty topology and not ErrUnavailable (502).
func TestClusterUnavailable(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	prefix := c.Prefix(t)
	p := clusterProvider(t, c, prefix, c.TokenConfig("no-such-token"), nil)
	g, err := p.Discover(context.Background(), providers.Request{})
	if !errors.Is(err, providers.ErrAuth) || errors.Is(err, providers.ErrUnavailable) || g != nil {
		t.Fatalf("Discover = %v, %v; want ErrAuth", g, err)
	}
}
