package topology_test

import (
	"testing"

	"github.com/toposcope/toposcope/topology"
)

func TestSummarize(t *testing.T) {
	t.Parallel()
	b := topology.NewBuilder()
	nodes(b, "n1", "n2", "n3", "n4", "cpu1")
	b.AddNode(topology.Node{Name: "big", GPUs: 4})
	b.AddPath("n1", []topology.SwitchInfo{sw("leaf1"), sw("spine1"), sw("core")})
	b.AddPath("n2", []topology.SwitchInfo{sw("leaf1"), sw("spine1"), sw("core")})
	b.AddPath("n3", []topology.SwitchInfo{sw("leaf2"), sw("spine1"), sw("core")})
	b.AddPath("n4", []topology.SwitchInfo{sw("leaf3"), sw("spine2"), sw("core")})
	b.AddPath("big", []topology.SwitchInfo{sw("leaf3"), sw("spine2"), sw("core")})
	// nvl1 spans two leaves under one spine; nvl2 spans both spines.
	b.AddToDomain("n1", "nvl1", "")
	b.AddToDomain("n3", "nvl1", "")
	b.AddToDomain("n2", "nvl2", "")
	b.AddToDomain("n4", "nvl2", "")
	b.AddToDomain("cpu1", "nvl3", "")
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	s := topology.Summarize(g)
	tests := []struct {
		id   string
		want topology.Aggregate
	}{
		{"leaf1", topology.Aggregate{Nodes: 2, GPUs: 16, Domains: 2}},
		{"leaf2", topology.Aggregate{Nodes: 1, GPUs: 8, Domains: 1}},
		{"leaf3", topology.Aggregate{Nodes: 2, GPUs: 12, Domains: 1}},
		{"spine1", topology.Aggregate{Nodes: 3, GPUs: 24, Domains: 2, Switches: 2}},
		{"spine2", topology.Aggregate{Nodes: 2, GPUs: 12, Domains: 1, Switches: 1}},
		{"core", topology.Aggregate{Nodes: 5, GPUs: 36, Domains: 2, Switches: 5}},
	}
	for _, tt := range tests {
		got, ok := s.Switch(tt.id)
		if !ok || got != tt.want {
			t.Errorf("%s = %+v (found %v), want %+v", tt.id, got, ok, tt.want)
		}
	}
	if want := (topology.Aggregate{Nodes: 6, GPUs: 44, Domains: 3, Switches: 6}); s.Total != want {
		t.Errorf("total = %+v, want %+v", s.Total, want)
	}
	if want := (topology.Aggregate{Nodes: 1, GPUs: 8, Domains: 1}); s.Unswitched != want {
		t.Errorf("unswitched = %+v, want %+v", s.Unswitched, want)
	}
	if _, ok := s.Switch("nope"); ok {
		t.Error("unknown switch found")
	}
}
