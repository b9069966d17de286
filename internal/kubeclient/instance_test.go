package kubeclient

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/keys"
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
		map[string]string{keys.Hostname: "ip-10-0-0-1", keys.TopologyZone: "us-west-2b", keys.TopologyRegion: "us-west-2"},
		map[string]string{keys.InstanceID: "i-override", keys.Region: "eu-1"},
		"aws:///us-west-2b/i-0abc")
	got := InstanceOf(n)
	want := Instance{Node: n.Name, Hostname: "ip-10-0-0-1", Provider: "aws", InstanceID: "i-override", Region: "eu-1", Zone: "us-west-2b"}
	if got != want {
		t.Errorf("InstanceOf = %+v, want %+v", got, want)
	}
	// Topograph's node-data-broker annotations count when toposcope's
	// are absent, and lose to them when present.
	broker := map[string]string{keys.TopographInstance: "i-broker", keys.TopographRegion: "us-east-2"}
	if got := InstanceOf(node("n1", nil, broker, "aws:///us-west-2b/i-0abc")); got.InstanceID != "i-broker" || got.Region != "us-east-2" {
		t.Errorf("with Topograph's annotations: %+v", got)
	}
	broker[keys.InstanceID], broker[keys.Region] = "i-ours", "eu-1"
	if got := InstanceOf(node("n1", nil, broker, "")); got.InstanceID != "i-ours" || got.Region != "eu-1" {
		t.Errorf("with both: %+v", got)
	}
}
