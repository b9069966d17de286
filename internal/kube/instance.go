package kube

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// Annotations an operator may set on a Node to override what toposcope
// derives from spec.providerID and the well-known labels.
const (
	// AnnotationInstanceID is the provider's instance ID of the node.
	AnnotationInstanceID = "toposcope.io/instance-id"
	// AnnotationRegion is the node's cloud region.
	AnnotationRegion = "toposcope.io/region"
)

// Well-known node labels read for instance mapping.
const (
	labelRegion = "topology.kubernetes.io/region"
	labelZone   = "topology.kubernetes.io/zone"
)

// Instance is what toposcope knows about the machine behind a Node.
type Instance struct {
	// Node is the Kubernetes node name; Hostname its kubernetes.io/hostname
	// label (empty when unset).
	Node, Hostname string
	// Provider is the spec.providerID scheme ("aws", "gce", "oci",
	// "azure", ...); empty without a provider ID.
	Provider string
	// InstanceID is the provider's ID of the machine: from the
	// toposcope.io/instance-id annotation, else from spec.providerID.
	InstanceID string
	// Region and Zone: the toposcope.io/region annotation, else the
	// topology.kubernetes.io labels, else what the provider ID implies.
	Region, Zone string
}

// InstanceOf reads the instance facts of a Node.
func InstanceOf(n *corev1.Node) Instance {
	in := ParseProviderID(n.Spec.ProviderID)
	in.Node = n.Name
	in.Hostname = n.Labels[HostnameLabel]
	if v := n.Annotations[AnnotationInstanceID]; v != "" {
		in.InstanceID = v
	}
	if v := n.Labels[labelZone]; v != "" {
		in.Zone = v
	}
	if v := n.Labels[labelRegion]; v != "" {
		in.Region = v
	}
	if v := n.Annotations[AnnotationRegion]; v != "" {
		in.Region = v
	}
	return in
}

// NodeRef is the reference a provider's discovery request uses for this
// node.
func (in Instance) NodeRef() providers.NodeRef {
	return providers.NodeRef{Name: in.Node, InstanceID: in.InstanceID, Region: in.Region}
}

// ParseProviderID splits a Node's spec.providerID into provider, instance
// ID, zone and region. Known forms:
//
//	aws:///us-east-1a/i-0abc            instance i-0abc, zone us-east-1a, region us-east-1
//	gce://project/us-central1-b/name    instance name, zone us-central1-b, region us-central1
//	oci://ocid1.instance.oc1.iad.xyz    instance the OCID, region iad (the OCID's region field)
//	azure:///subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachines/vm
//	                                    instance vm (scale-set VMs: "<set>_<index>")
//	openstack:///uuid, ibm://.../id, kind://docker/cluster/node, and any
//	other scheme                        instance = the last path segment
//
// An empty or unparsable ID gives an Instance with no instance ID.
func ParseProviderID(id string) Instance {
	scheme, rest, ok := strings.Cut(id, "://")
	if !ok || scheme == "" {
		return Instance{}
	}
	in := Instance{Provider: scheme}
	parts := splitPath(rest)
	if len(parts) == 0 {
		return in
	}
	last := parts[len(parts)-1]
	switch scheme {
	case "aws":
		in.InstanceID = last
		if len(parts) >= 2 {
			in.Zone = parts[len(parts)-2]
			in.Region = awsRegion(in.Zone)
		}
	case "gce":
		in.InstanceID = last
		if len(parts) >= 3 {
			in.Zone = parts[1]
			in.Region = gceRegion(in.Zone)
		}
	case "oci":
		in.InstanceID = last
		if f := strings.Split(last, "."); len(f) >= 5 && f[0] == "ocid1" {
			in.Region = f[3]
		}
	case "azure":
		in.InstanceID = last
		for i := 0; i+2 < len(parts); i++ {
			if strings.EqualFold(parts[i], "virtualMachineScaleSets") && strings.EqualFold(parts[i+2], "virtualMachines") && i+3 < len(parts) {
				in.InstanceID = parts[i+1] + "_" + parts[i+3]
				break
			}
		}
	default:
		in.InstanceID = last
	}
	return in
}

func splitPath(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "/") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// awsRegion turns an availability zone (us-east-1a) into its region.
func awsRegion(zone string) string {
	if zone == "" {
		return ""
	}
	if c := zone[len(zone)-1]; c >= 'a' && c <= 'z' {
		return zone[:len(zone)-1]
	}
	return zone
}

// gceRegion turns a zone (us-central1-b) into its region (us-central1).
func gceRegion(zone string) string {
	if i := strings.LastIndexByte(zone, '-'); i > 0 {
		return zone[:i]
	}
	return zone
}

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
	in := InstanceOf(k)
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
