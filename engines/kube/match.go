package kube

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/topology"
)

// Match kinds, in the order Matcher tries them.
const (
	MatchNone       = ""
	MatchName       = "name"
	MatchHostname   = "hostname"
	MatchInstanceID = "instance-id"
)

// Matcher finds the graph node of a Kubernetes Node: by node name, then by
// the kubernetes.io/hostname label, then by instance ID (the
// toposcope.io/instance-id annotation or spec.providerID; when both sides
// know a region they must agree). Each graph node matches at most one
// Kubernetes node: the first one to claim it. Not safe for concurrent use.
type Matcher struct {
	g          *topology.Graph
	byInstance map[string]*topology.Node
	claimed    map[string]string // graph node -> Kubernetes node
}

// NewMatcher indexes g.
func NewMatcher(g *topology.Graph) *Matcher {
	m := &Matcher{g: g, byInstance: map[string]*topology.Node{}, claimed: map[string]string{}}
	dup := map[string]bool{}
	for i := range g.Nodes() {
		n := &g.Nodes()[i]
		if n.InstanceID == "" {
			continue
		}
		if _, ok := m.byInstance[n.InstanceID]; ok {
			dup[n.InstanceID] = true
		}
		m.byInstance[n.InstanceID] = n
	}
	for id := range dup {
		delete(m.byInstance, id) // ambiguous: match these by name only
	}
	return m
}

// Match returns the graph node of k and how it matched; nil and MatchNone
// when the graph does not contain it (or another Kubernetes node claimed it
// first).
func (m *Matcher) Match(k *corev1.Node) (*topology.Node, string) {
	in := kubeclient.InstanceOf(k)
	try := func(n *topology.Node, ok bool, kind string) (*topology.Node, string) {
		if !ok || n == nil {
			return nil, MatchNone
		}
		if owner, taken := m.claimed[n.Name]; taken && owner != k.Name {
			return nil, MatchNone
		}
		m.claimed[n.Name] = k.Name
		return n, kind
	}
	if n, ok := m.g.Node(k.Name); ok {
		if got, kind := try(n, true, MatchName); got != nil {
			return got, kind
		}
	}
	if in.Hostname != "" && in.Hostname != k.Name {
		if n, ok := m.g.Node(in.Hostname); ok {
			if got, kind := try(n, true, MatchHostname); got != nil {
				return got, kind
			}
		}
	}
	if in.InstanceID != "" {
		n, ok := m.byInstance[in.InstanceID]
		if ok && (n.Region == "" || in.Region == "" || n.Region == in.Region) {
			return try(n, true, MatchInstanceID)
		}
	}
	return nil, MatchNone
}
