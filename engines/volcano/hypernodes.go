package volcano

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/topology"
)

// DomainTierName is the spec.tierName of the HyperNodes that stand for
// accelerator (NVLink) domains; they are tier 1.
const DomainTierName = "accelerator-domain"

// SwitchTierNamePrefix starts the spec.tierName of a switch's HyperNode:
// "tier-0" for leaf switches, "tier-1" one level up, and so on.
const SwitchTierNamePrefix = "tier-"

// domainInfix starts the name part of a domain's HyperNode, so that it
// never takes a switch's name.
const domainInfix = "domain-"

// objectName is the HyperNode name of a switch: the prefix and the
// switch's safe name, lowercased, with a hash of the ID when that changed
// it (at most MaxNameLen + 9 characters after the prefix).
func (e *Engine) objectName(s *topology.Switch) string {
	return e.cfg.Prefix + namePart(s.Name, s.ID, false)
}

// domainObjectName is the HyperNode name of the part of domain d under
// leaf (the whole domain when it is under one leaf switch only, or under
// none).
func (e *Engine) domainObjectName(d *topology.Domain, leaf string, split bool) string {
	id := d.ID
	if split {
		id += "\x00" + leaf
	}
	return e.cfg.Prefix + namePart(domainInfix+d.Name, id, split)
}

// namePart lowercases readable into object-name characters; when that
// changed it, when it is longer than topology.MaxNameLen or when hash is
// set, it is cut to MaxNameLen and eight hex digits of the SHA-256 of id
// are appended.
func namePart(readable, id string, hash bool) string {
	n := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, readable)
	n = strings.Trim(n, "-.")
	if n != readable || n == "" || hash || len(n) > topology.MaxNameLen {
		if len(n) > topology.MaxNameLen {
			n = strings.Trim(n[:topology.MaxNameLen], "-.")
		}
		sum := sha256.Sum256([]byte(id))
		n = strings.Trim(n+"-"+hex.EncodeToString(sum[:4]), "-")
	}
	return n
}

// domainPiece is the part of one accelerator domain under one leaf switch
// ("" for the nodes of the domain under no switch).
type domainPiece struct {
	domain *topology.Domain
	leaf   string
	nodes  []string // Kubernetes node names
}

// hyperNodeBuilder holds the state of one hyperNodes call.
type hyperNodeBuilder struct {
	e        *Engine
	g        *topology.Graph
	member   func(n *topology.Node) string
	split    map[string]bool // domain ID -> its nodes are under several leaves
	pieces   map[string][]*domainPiece
	leafTier int
	out      []*unstructured.Unstructured
}

// hyperNodes returns the HyperNodes of g, lowest tier first, and a
// warning per accelerator domain whose nodes are under several leaf
// switches (it is written as one HyperNode per leaf, since a HyperNode has
// one parent); member maps a graph node to its Kubernetes node name (""
// leaves it out).
func (e *Engine) hyperNodes(g *topology.Graph, member func(n *topology.Node) string) ([]*unstructured.Unstructured, []string) {
	b := &hyperNodeBuilder{e: e, g: g, member: member, split: map[string]bool{}, pieces: map[string][]*domainPiece{}, leafTier: 1}
	var warnings []string
	for i := range g.Domains() {
		d := &g.Domains()[i]
		b.leafTier = 2
		byLeaf := map[string]*domainPiece{}
		var order []string
		for _, nn := range d.Nodes {
			n, ok := g.Node(nn)
			if !ok {
				continue
			}
			p := byLeaf[n.Leaf]
			if p == nil {
				p = &domainPiece{domain: d, leaf: n.Leaf}
				byLeaf[n.Leaf] = p
				order = append(order, n.Leaf)
			}
			if k := member(n); k != "" {
				p.nodes = append(p.nodes, k)
			}
		}
		if len(order) > 1 {
			b.split[d.ID] = true
			warnings = append(warnings, fmt.Sprintf("accelerator domain %s is under %d leaf switches: written as one HyperNode per leaf switch", d.Name, len(order)))
		}
		for _, leaf := range order {
			b.pieces[leaf] = append(b.pieces[leaf], byLeaf[leaf])
		}
	}
	for _, p := range b.pieces[""] { // domains under no switch are roots
		b.domain(p)
	}
	for _, r := range g.Roots() {
		b.visit(r)
	}
	return b.out, warnings
}

// domain adds the HyperNode of p (tier 1, its nodes as members) and
// returns its name, or "" when it has no member.
func (b *hyperNodeBuilder) domain(p *domainPiece) string {
	if len(p.nodes) == 0 {
		return ""
	}
	members := make([]any, 0, len(p.nodes))
	for _, k := range p.nodes {
		members = append(members, memberOf("Node", k))
	}
	name := b.e.domainObjectName(p.domain, p.leaf, b.split[p.domain.ID])
	b.add(name, 1, DomainTierName, members, map[string]string{keys.DomainID: p.domain.ID})
	return name
}

// visit adds the HyperNodes of s and of everything below it and returns
// the name and tier of s's, or ("", 0) when no node is below s.
func (b *hyperNodeBuilder) visit(s *topology.Switch) (string, int) {
	var members []any
	tier := b.leafTier
	for _, id := range s.Children {
		c, ok := b.g.Switch(id)
		if !ok {
			continue
		}
		if name, t := b.visit(c); t > 0 {
			members = append(members, memberOf("HyperNode", name))
			tier = max(tier, t+1)
		}
	}
	for _, p := range b.pieces[s.ID] {
		if name := b.domain(p); name != "" {
			members = append(members, memberOf("HyperNode", name))
		}
	}
	for _, nn := range s.Nodes {
		n, ok := b.g.Node(nn)
		if !ok || n.Domain != "" {
			continue
		}
		if k := b.member(n); k != "" {
			members = append(members, memberOf("Node", k))
		}
	}
	if len(members) == 0 {
		return "", 0
	}
	name := b.e.objectName(s)
	b.add(name, tier, SwitchTierNamePrefix+strconv.Itoa(tier-b.leafTier), members, map[string]string{keys.SwitchID: s.ID})
	return name, tier
}

func (b *hyperNodeBuilder) add(name string, tier int, tierName string, members []any, annotations map[string]string) {
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": Resource.Group + "/" + Resource.Version, "kind": "HyperNode",
		"spec": map[string]any{"tier": int64(tier), "tierName": tierName, "members": members},
	}}
	o.SetName(name)
	o.SetLabels(map[string]string{keys.ManagedBy: kubeclient.FieldManager})
	o.SetAnnotations(annotations)
	b.out = append(b.out, o)
}

func memberOf(kind, name string) any {
	return map[string]any{"type": kind, "selector": map[string]any{"exactMatch": map[string]any{"name": name}}}
}
