package nfd

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/topology"
)

// GroupResource is the NodeFeatureGroup resource.
var GroupResource = schema.GroupVersionResource{Group: "nfd.k8s-sigs.io", Version: "v1alpha1", Resource: "nodefeaturegroups"}

// Annotations of a NodeFeatureGroup: what it groups.
const (
	// AnnotationGroupKind is "switch", "domain" or "subdomain".
	AnnotationGroupKind = "toposcope.io/group-kind"
	// AnnotationGroupID is the switch's or domain's provider ID.
	AnnotationGroupID = "toposcope.io/group-id"
)

// objectPrefix starts the name of every object the engine writes.
const objectPrefix = "toposcope-"

// groupName is a NodeFeatureGroup's name: its kind, the ID made a DNS
// label, and 8 hex digits of the ID's SHA-256 (two IDs that read alike
// once lower-cased never share a name).
func groupName(kind, id string) string {
	sum := sha256.Sum256([]byte(id))
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(id) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		switch {
		case ok:
			b.WriteRune(c)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	part := strings.TrimRight(b.String(), "-")
	room := 63 - len(objectPrefix) - len(kind) - 2 - 8
	if len(part) > room {
		part = strings.TrimRight(part[:room], "-")
	}
	if part == "" {
		part = "id"
	}
	return objectPrefix + kind + "-" + part + "-" + hex.EncodeToString(sum[:4])
}

// groups returns a NodeFeatureGroup per switch and per NVLink domain and
// sub-domain that holds a node of want (by name, the node as its
// NodeFeature has it: its domain may come from domainSourceLabel), each selecting its
// nodes by the elements of their NodeFeature: a switch by its tier
// element (one rule per tier it is at: in a tree of uneven depth a
// switch can be tier-1 of one node and tier-2 of another), a domain by
// accelerator-domain, a sub-domain by accelerator-subdomain.
func (e *Engine) groups(g *topology.Graph, want map[string]*topology.Node) []*unstructured.Unstructured {
	type group struct {
		kind, id string
		tiers    map[int]bool // switches: the tiers it is at
	}
	seen := map[string]*group{}
	var order []string
	add := func(kind, id string, tier int) {
		key := kind + "\x00" + id
		gr := seen[key]
		if gr == nil {
			gr = &group{kind: kind, id: id, tiers: map[int]bool{}}
			seen[key] = gr
			order = append(order, key)
		}
		if tier >= 0 {
			gr.tiers[tier] = true
		}
	}
	for i := range g.Nodes() {
		n := want[g.Nodes()[i].Name]
		if n == nil {
			continue
		}
		for t, s := range g.Path(n.Name) {
			add("switch", s.ID, t)
		}
		if n.Domain != "" {
			add("domain", n.Domain, -1)
		}
		if n.SubDomain != "" {
			add("subdomain", n.SubDomain, -1)
		}
	}
	slices.Sort(order)
	out := make([]*unstructured.Unstructured, 0, len(order))
	for _, key := range order {
		gr := seen[key]
		var rules []any
		switch gr.kind {
		case "switch":
			tiers := make([]int, 0, len(gr.tiers))
			for t := range gr.tiers {
				tiers = append(tiers, t)
			}
			slices.Sort(tiers)
			for _, t := range tiers {
				rules = append(rules, rule(gr.kind+" "+gr.id+" at tier "+strconv.Itoa(t), "tier-"+strconv.Itoa(t), gr.id))
			}
		case "domain":
			rules = append(rules, rule("domain "+gr.id, "accelerator-domain", gr.id))
		default:
			rules = append(rules, rule("sub-domain "+gr.id, "accelerator-subdomain", gr.id))
		}
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": GroupResource.Group + "/" + GroupResource.Version, "kind": "NodeFeatureGroup",
			"spec": map[string]any{"featureGroupRules": rules},
		}}
		o.SetName(groupName(gr.kind, gr.id))
		o.SetNamespace(e.cfg.Namespace)
		o.SetLabels(map[string]string{keys.ManagedBy: kubeclient.FieldManager})
		o.SetAnnotations(map[string]string{AnnotationGroupKind: gr.kind, AnnotationGroupID: gr.id})
		out = append(out, o)
	}
	return out
}

// rule is one featureGroupRule: element of FeatureSet equals value.
func rule(name, element, value string) map[string]any {
	return map[string]any{
		"name": name,
		"matchFeatures": []any{map[string]any{
			"feature":          FeatureSet,
			"matchExpressions": map[string]any{element: map[string]any{"op": "In", "value": []any{value}}},
		}},
	}
}
