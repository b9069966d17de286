package k8slabels

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/providers/nvlink"
	"github.com/toposcope/toposcope/topology"
)

// Sentinel errors, wrapped by Discover's errors (which name the node and
// the label key).
var (
	// ErrBadLabel means a label value does not parse (a clique label
	// that is not <ClusterUUID>.<CliqueID>), or a label is set without
	// the label it depends on (a lower tier without the tier above, a
	// sub-domain without a domain).
	ErrBadLabel = errors.New("bad topology label")
	// ErrConflict means the labels of a node, or of two nodes, contradict
	// each other: AWS and GKE labels on one node, a switch under two
	// different parents, a sub-domain in two domains.
	ErrConflict = errors.New("conflicting topology labels")
	// ErrNoCluster means the provider has neither static nodes nor a
	// Kubernetes client.
	ErrNoCluster = errors.New("no Kubernetes client and no static nodes")
)

// tier is one switch of a node's path and the label it came from.
type tier struct {
	key  string
	info topology.SwitchInfo
}

// placement is what a node's labels say.
type placement struct {
	path        []tier // closest to the node first
	domain, sub string
	domainKey   string
	subKey      string
}

// label returns the node's value for key; an empty value is no value.
func label(n *corev1.Node, key string) (string, bool) {
	v, ok := n.Labels[key]
	v = strings.TrimSpace(v)
	return v, ok && v != ""
}

func hasAny(n *corev1.Node, keys []string) []string {
	var out []string
	for _, k := range keys {
		if _, ok := label(n, k); ok {
			out = append(out, k)
		}
	}
	return out
}

// tiersOf returns the tier keys (top first) that apply to node n.
func (c *Config) tiersOf(n *corev1.Node) ([]string, error) {
	if c.Tiers != TiersAuto {
		return c.tierKeys(c.Tiers), nil
	}
	aws, gke := c.tierKeys(TiersAWS), c.tierKeys(TiersGKE)
	onAWS, onGKE := hasAny(n, aws), hasAny(n, gke)
	switch {
	case len(onAWS) > 0 && len(onGKE) > 0:
		return nil, fmt.Errorf("node %q: labels %s (AWS) and %s (GKE) both set: %w",
			n.Name, strings.Join(onAWS, ", "), strings.Join(onGKE, ", "), ErrConflict)
	case len(onAWS) > 0:
		return aws, nil
	case len(onGKE) > 0:
		return gke, nil
	}
	return nil, nil
}

// place reads node n's switch path and domain.
func (c *Config) place(n *corev1.Node) (placement, error) {
	var p placement
	keys, err := c.tiersOf(n)
	if err != nil {
		return p, err
	}
	var errs []error
	parent, above := "", ""
	var top []tier // top first
	for _, key := range keys {
		v, ok := label(n, key)
		if !ok {
			if above == "" {
				above = key // the first missing tier; lower ones must be missing too
			}
			continue
		}
		if above != "" {
			errs = append(errs, fmt.Errorf("node %q: label %s=%q is set but %s, the tier above it, is not: %w",
				n.Name, key, v, above, ErrBadLabel))
			continue
		}
		id := v
		if c.Qualify && parent != "" {
			id = parent + "/" + v
		}
		top = append(top, tier{key: key, info: topology.SwitchInfo{ID: id}})
		parent = id
	}
	if c.Tiers == TiersCrusoe && len(top) < len(keys) && len(errs) == 0 {
		// No pod label (a CPU node, a GPU type without InfiniBand; a
		// partition alone places nothing, its switch holding pods):
		// schedulable under the placeholder, with no locality.
		top = nil
		if ph := c.placeholder(); ph != "" {
			top = []tier{{key: "placeholderSwitch", info: topology.SwitchInfo{ID: ph}}}
		}
	}
	for i := len(top) - 1; i >= 0; i-- {
		p.path = append(p.path, top[i])
	}
	if c.DomainLabel != NoLabel {
		if v, ok := label(n, c.DomainLabel); ok {
			p.domain, p.domainKey = v, c.DomainLabel
			if c.DomainLabel == nvlink.CliqueLabel {
				cl, err := nvlink.ParseCliqueLabel(v)
				if err != nil {
					errs = append(errs, fmt.Errorf("node %q: label %s=%q: %w: %w", n.Name, c.DomainLabel, v, ErrBadLabel, err))
				}
				p.domain = cl.String()
			}
		}
		if c.DomainLabel == nvlink.CliqueLabel && c.AgentAnnotations {
			errs = append(errs, agentClique(n, &p))
		}
	}
	if c.SubDomainLabel != "" {
		if v, ok := label(n, c.SubDomainLabel); ok {
			if p.domain == "" {
				errs = append(errs, fmt.Errorf("node %q: label %s=%q is set but the node has no domain label %s: %w",
					n.Name, c.SubDomainLabel, v, c.DomainLabel, ErrBadLabel))
			}
			p.sub, p.subKey = v, c.SubDomainLabel
		}
	}
	return p, errors.Join(errs...)
}

// owner records where a switch's parent or a sub-domain's domain was
// first seen, to report contradictions by node and key.
type owner struct{ value, node, key string }

// consistency checks that every switch has one parent and every
// sub-domain one domain across the nodes.
type consistency struct {
	parent map[string]owner // switch ID -> its parent
	domain map[string]owner // sub-domain -> its domain
}

func newConsistency() *consistency {
	return &consistency{parent: map[string]owner{}, domain: map[string]owner{}}
}

// check reports the contradictions of node's placement with earlier ones.
func (k *consistency) check(node string, p placement) error {
	var errs []error
	for i, t := range p.path {
		up, upKey := "", ""
		if i+1 < len(p.path) {
			up, upKey = p.path[i+1].info.ID, p.path[i+1].key
		}
		old, ok := k.parent[t.info.ID]
		if !ok {
			k.parent[t.info.ID] = owner{value: up, node: node, key: upKey}
			continue
		}
		if old.value != up {
			errs = append(errs, fmt.Errorf("node %q: label %s=%q: switch %q is under %s here but under %s on node %q (set qualify: true if values repeat under different parents): %w",
				node, t.key, t.info.ID, t.info.ID, describeParent(up, upKey), describeParent(old.value, old.key), old.node, ErrConflict))
		}
	}
	if p.sub != "" {
		old, ok := k.domain[p.sub]
		switch {
		case !ok:
			k.domain[p.sub] = owner{value: p.domain, node: node}
		case old.value != p.domain:
			errs = append(errs, fmt.Errorf("node %q: label %s=%q: sub-domain is in domain %q here but in %q on node %q: %w",
				node, p.subKey, p.sub, p.domain, old.value, old.node, ErrConflict))
		}
	}
	return errors.Join(errs...)
}

func describeParent(id, key string) string {
	if id == "" {
		return "no switch (a top tier)"
	}
	return fmt.Sprintf("%s=%q", key, id)
}

// agentClique reads the clique and rack that the node agent annotated
// (toposcope agent --annotate): the clique when the node has no
// nvidia.com/gpu.clique label (a label that disagrees is a conflict), the
// rack as sub-domain when no sub-domain label is configured.
func agentClique(n *corev1.Node, p *placement) error {
	key := keys.NVLinkClique
	v := strings.TrimSpace(n.Annotations[key])
	if v == "" {
		key = keys.TopographClusterID // Topograph's node-data-broker
		v = strings.TrimSpace(n.Annotations[key])
	}
	if v == "" {
		return nil
	}
	cl, err := nvlink.ParseCliqueLabel(v)
	if err != nil {
		return fmt.Errorf("node %q: annotation %s=%q: %w: %w", n.Name, key, v, ErrBadLabel, err)
	}
	switch {
	case p.domain == "":
		p.domain, p.domainKey = cl.String(), key
	case p.domain != cl.String():
		return fmt.Errorf("node %q: label %s=%q but annotation %s=%q: %w",
			n.Name, nvlink.CliqueLabel, n.Labels[nvlink.CliqueLabel], key, v, ErrConflict)
	}
	if p.sub == "" {
		if r := strings.TrimSpace(n.Annotations[keys.NVLinkRack]); r != "" {
			p.sub, p.subKey = r, keys.NVLinkRack
		}
	}
	return nil
}
