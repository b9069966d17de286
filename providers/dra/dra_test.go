package dra_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/dra"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// env is the package's apiserver; ResourceSlices are built in
// (resource.k8s.io/v1).
var env = kubetest.NewEnv()

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// gpu is a device with the NVML fabric identifiers as attributes.
func gpu(name, cluster string, clique int64) resourcev1.Device {
	return resourcev1.Device{Name: name, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
		"clusterUUID": {StringValue: ptr.To(cluster)}, "cliqueID": {IntValue: ptr.To(clique)}, "type": {StringValue: ptr.To("gpu")},
	}}
}

// publish creates one node-local ResourceSlice of driver for node.
func publish(t *testing.T, c *kubetest.Cluster, driver, node string, devs ...resourcev1.Device) {
	t.Helper()
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + strings.ReplaceAll(driver, ".", "-")},
		Spec: resourcev1.ResourceSliceSpec{Driver: driver, NodeName: ptr.To(node),
			Pool:    resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			Devices: devs},
	}
	if _, err := c.Core().ResourceV1().ResourceSlices().Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func provider(t *testing.T, c *kubetest.Cluster, driver string) *dra.Provider {
	t.Helper()
	cfg := dra.DefaultConfig()
	cfg.Driver = driver
	clients, err := kubeclient.NewClients(c.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	p, err := dra.New(cfg, clients.Core, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDomainsFromResourceSlices: on the real apiserver, the provider reads
// the driver's node-local ResourceSlices; each node's domain is
// <clusterUUID>.<cliqueID> of its GPUs; a node whose devices lack them,
// or that has no slice, is kept unplaced; another driver's slices are
// not read.
func TestDomainsFromResourceSlices(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	pre := c.Prefix(t)
	driver := pre + ".gpu.example.com"
	const cluster = "5a1e0c2f-0000-4000-8000-000000000001"
	publish(t, c, driver, pre+"-n1", gpu("gpu-0", cluster, 1), gpu("gpu-1", cluster, 1))
	publish(t, c, driver, pre+"-n2", gpu("gpu-0", cluster, 1))
	publish(t, c, driver, pre+"-n3", gpu("gpu-0", cluster, 2))
	publish(t, c, driver, pre+"-n4", resourcev1.Device{Name: "nic-0", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"type": {StringValue: ptr.To("nic")}}})
	publish(t, c, pre+".other.example.com", pre+"-n9", gpu("gpu-0", cluster, 7))

	g, err := provider(t, c, driver).Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes()) != 4 {
		t.Fatalf("%d nodes, want 4 (n1-n4)", len(g.Nodes()))
	}
	doms := map[string][]string{}
	for _, d := range g.Domains() {
		doms[d.ID] = d.Nodes
	}
	if !slices.Equal(doms[cluster+".1"], []string{pre + "-n1", pre + "-n2"}) || !slices.Equal(doms[cluster+".2"], []string{pre + "-n3"}) || len(doms) != 2 {
		t.Errorf("domains %v", doms)
	}
	if n, _ := g.Node(pre + "-n1"); n.GPUs != 2 {
		t.Errorf("n1 has %d devices, want 2", n.GPUs)
	}

	// A request: a node without any slice is kept, unplaced.
	g, err = provider(t, c, driver).Discover(context.Background(), providers.Request{Nodes: []providers.NodeRef{{Name: pre + "-n1"}, {Name: pre + "-n5"}}})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := g.Node(pre + "-n5"); !ok || n.Domain != "" || len(g.Nodes()) != 2 {
		t.Errorf("requested node without a slice: %+v %v", n, ok)
	}
}

// TestConflictingDevices: devices of one node in two domains are an
// error naming the node.
func TestConflictingDevices(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	pre := c.Prefix(t)
	driver := pre + ".gpu.example.com"
	publish(t, c, driver, pre+"-n1", gpu("gpu-0", "c1", 1), gpu("gpu-1", "c1", 2))
	_, err := provider(t, c, driver).Discover(context.Background(), providers.Request{})
	if !errors.Is(err, dra.ErrConflict) || !strings.Contains(err.Error(), pre+"-n1") {
		t.Fatalf("err = %v, want ErrConflict naming the node", err)
	}
}

// TestRBAC runs the provider with only
// charts/toposcope/rbac/provider-dra.yaml and checks each rule was needed.
func TestRBAC(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	pre := c.Prefix(t)
	driver := pre + ".gpu.example.com"
	publish(t, c, driver, pre+"-n1", gpu("gpu-0", "c1", 1))
	rules, err := kubetest.LoadRules("../../charts/toposcope/rbac/provider-dra.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.ServiceAccountConfig(context.Background(), c.Namespace(t), "toposcope", rules.Cluster, rules.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	counter := kubetest.NewCounter()
	clients, err := kubeclient.NewClients(counter.Instrument(rc))
	if err != nil {
		t.Fatal(err)
	}
	cfg := dra.DefaultConfig()
	cfg.Driver = driver
	p, err := dra.New(cfg, clients.Core, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Discover(context.Background(), providers.Request{}); err != nil {
		t.Fatalf("discover as the ServiceAccount: %v", err)
	}
	if unused := rules.Unused(counter.Accesses()); len(unused) > 0 {
		t.Errorf("provider-dra.yaml grants permissions the provider never used: %v", unused)
	}
}
