package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/topology"
)

func TestParseProviderID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id   string
		want Instance
	}{
		{"aws:///us-east-1a/i-0abc123", Instance{Provider: "aws", InstanceID: "i-0abc123", Zone: "us-east-1a", Region: "us-east-1"}},
		{"gce://my-project/us-central1-b/gke-node-1", Instance{Provider: "gce", InstanceID: "gke-node-1", Zone: "us-central1-b", Region: "us-central1"}},
		{"oci://ocid1.instance.oc1.iad.anuwcljs", Instance{Provider: "oci", InstanceID: "ocid1.instance.oc1.iad.anuwcljs", Region: "iad"}},
		{"azure:///subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachines/vm1", Instance{Provider: "azure", InstanceID: "vm1"}},
		{"azure:///subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachineScaleSets/pool/virtualMachines/3", Instance{Provider: "azure", InstanceID: "pool_3"}},
		{"openstack:///8d3f2c1e-uuid", Instance{Provider: "openstack", InstanceID: "8d3f2c1e-uuid"}},
		{"kind://docker/kind/kind-worker", Instance{Provider: "kind", InstanceID: "kind-worker"}},
		{"", Instance{}},
		{"no-scheme", Instance{}},
		{"aws://", Instance{Provider: "aws"}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			if got := ParseProviderID(tt.id); got != tt.want {
				t.Errorf("ParseProviderID(%q) = %+v, want %+v", tt.id, got, tt.want)
			}
		})
	}
}

func node(name string, labels, annotations map[string]string, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

func TestInstanceOf(t *testing.T) {
	t.Parallel()
	n := node("ip-10-0-0-1.ec2.internal",
		map[string]string{HostnameLabel: "ip-10-0-0-1", labelZone: "us-west-2b", labelRegion: "us-west-2"},
		map[string]string{AnnotationInstanceID: "i-override", AnnotationRegion: "eu-1"},
		"aws:///us-west-2b/i-0abc")
	got := InstanceOf(n)
	want := Instance{Node: n.Name, Hostname: "ip-10-0-0-1", Provider: "aws", InstanceID: "i-override", Region: "eu-1", Zone: "us-west-2b"}
	if got != want {
		t.Errorf("InstanceOf = %+v, want %+v", got, want)
	}
	if ref := got.NodeRef(); ref.Name != n.Name || ref.InstanceID != "i-override" || ref.Region != "eu-1" {
		t.Errorf("NodeRef = %+v", ref)
	}
}

func TestMatcher(t *testing.T) {
	t.Parallel()
	b := topology.NewBuilder()
	b.AddNode(topology.Node{Name: "gpu001"})
	b.AddNode(topology.Node{Name: "gpu002", InstanceID: "i-2", Region: "us-east-1"})
	b.AddNode(topology.Node{Name: "gpu003", InstanceID: "i-3", Region: "us-east-1"})
	b.AddNode(topology.Node{Name: "gpu004", InstanceID: "dup"})
	b.AddNode(topology.Node{Name: "gpu005", InstanceID: "dup"})
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		node     *corev1.Node
		want     string
		wantKind string
	}{
		{"by name", node("gpu001", nil, nil, ""), "gpu001", MatchName},
		{"by hostname", node("gpu001.cluster.local", map[string]string{HostnameLabel: "gpu001"}, nil, ""), "", MatchNone}, // gpu001 claimed above
		{"by provider ID", node("ip-1", nil, nil, "aws:///us-east-1a/i-2"), "gpu002", MatchInstanceID},
		{"region mismatch", node("ip-2", nil, nil, "aws:///eu-west-1a/i-3"), "", MatchNone},
		{"by annotation", node("ip-3", nil, map[string]string{AnnotationInstanceID: "i-3"}, ""), "gpu003", MatchInstanceID},
		{"ambiguous instance", node("ip-4", nil, map[string]string{AnnotationInstanceID: "dup"}, ""), "", MatchNone},
		{"unknown", node("other", nil, nil, ""), "", MatchNone},
	}
	m := NewMatcher(g) // sequential: claims carry over from row to row
	for _, tt := range tests {
		n, kind := m.Match(tt.node)
		got := ""
		if n != nil {
			got = n.Name
		}
		if got != tt.want || kind != tt.wantKind {
			t.Errorf("%s: Match = %q (%s), want %q (%s)", tt.name, got, kind, tt.want, tt.wantKind)
		}
	}
	m2 := NewMatcher(g)
	if n, kind := m2.Match(node("gpu001.cluster.local", map[string]string{HostnameLabel: "gpu001"}, nil, "")); n == nil || kind != MatchHostname {
		t.Errorf("hostname match on a fresh matcher = %v, %s", n, kind)
	}
	if n, _ := m2.Match(node("gpu001.cluster.local", map[string]string{HostnameLabel: "gpu001"}, nil, "")); n == nil {
		t.Error("the same Kubernetes node must match its graph node again")
	}
}
