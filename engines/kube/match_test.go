package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/topology"
)

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
		{"by hostname", node("gpu001.cluster.local", map[string]string{keys.Hostname: "gpu001"}, nil, ""), "", MatchNone}, // gpu001 claimed above
		{"by provider ID", node("ip-1", nil, nil, "aws:///us-east-1a/i-2"), "gpu002", MatchInstanceID},
		{"region mismatch", node("ip-2", nil, nil, "aws:///eu-west-1a/i-3"), "", MatchNone},
		{"by annotation", node("ip-3", nil, map[string]string{keys.InstanceID: "i-3"}, ""), "gpu003", MatchInstanceID},
		{"ambiguous instance", node("ip-4", nil, map[string]string{keys.InstanceID: "dup"}, ""), "", MatchNone},
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
	if n, kind := m2.Match(node("gpu001.cluster.local", map[string]string{keys.Hostname: "gpu001"}, nil, "")); n == nil || kind != MatchHostname {
		t.Errorf("hostname match on a fresh matcher = %v, %s", n, kind)
	}
	if n, _ := m2.Match(node("gpu001.cluster.local", map[string]string{keys.Hostname: "gpu001"}, nil, "")); n == nil {
		t.Error("the same Kubernetes node must match its graph node again")
	}
}
