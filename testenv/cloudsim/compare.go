package cloudsim

import (
	"strings"
	"testing"

	"github.com/toposcope/toposcope/topology"
)

// PathIDs joins the switch IDs of a path with ">".
func PathIDs(p []*topology.Switch) string {
	var s []string
	for _, sw := range p {
		s = append(s, sw.ID)
	}
	return strings.Join(s, ">")
}

// InstanceNames maps the instance IDs of g's nodes to their names.
func InstanceNames(g *topology.Graph) map[string]string {
	m := map[string]string{}
	for _, n := range g.Nodes() {
		m[n.InstanceID] = n.Name
	}
	return m
}

// SameTopology fails t unless every node of want has the same switch path
// (by ID) and domain in got, and got has no other node.
func SameTopology(t testing.TB, got, want *topology.Graph) {
	t.Helper()
	if len(got.Nodes()) != len(want.Nodes()) {
		t.Fatalf("got %d nodes, want %d", len(got.Nodes()), len(want.Nodes()))
	}
	for _, n := range want.Nodes() {
		g, ok := got.Node(n.Name)
		if !ok {
			t.Fatalf("node %s missing", n.Name)
		}
		if PathIDs(got.Path(n.Name)) != PathIDs(want.Path(n.Name)) || g.Domain != n.Domain {
			t.Fatalf("node %s: path %s domain %q, want %s %q", n.Name, PathIDs(got.Path(n.Name)), g.Domain, PathIDs(want.Path(n.Name)), n.Domain)
		}
	}
}
