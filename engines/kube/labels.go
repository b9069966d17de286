package kube

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/topology"
)

// Label presets (LabelConfig.Preset).
const (
	// PresetToposcope writes topology.toposcope.io/tier-N,
	// topology.toposcope.io/accelerator-domain and
	// topology.toposcope.io/accelerator-subdomain.
	PresetToposcope = "toposcope"
	// PresetTopographV1 writes NVIDIA Topograph v1.0's keys:
	// fabric.topograph.run/tier-N, accelerator.topograph.run/domain and
	// accelerator.topograph.run/sub-domain, so that a scheduler
	// configured for Topograph keeps working.
	PresetTopographV1 = "topograph-v1"
)

type preset struct{ tierPrefix, domain, subDomain string }

func presetKeys(name string) (preset, bool) {
	switch name {
	case PresetToposcope:
		return preset{keys.TierPrefix, keys.AcceleratorDomain, keys.AcceleratorSubdomain}, true
	case PresetTopographV1:
		return preset{"fabric.topograph.run/tier-", "accelerator.topograph.run/domain", "accelerator.topograph.run/sub-domain"}, true
	}
	return preset{}, false
}

// LabelConfig chooses the node label keys. It is shared by the k8s-labels
// engine (which writes them) and the kueue and kai engines (whose Topology
// levels name them), so both must be given the same settings.
type LabelConfig struct {
	// Preset is PresetToposcope (default) or PresetTopographV1.
	Preset string `yaml:"preset"`
	// TierLabels, when set, replaces the preset's tier keys: TierLabels[0]
	// is the switch closest to the node. Tiers beyond the list are not
	// written.
	TierLabels []string `yaml:"tierLabels,omitempty"`
	// DomainLabel and SubDomainLabel replace the preset's accelerator
	// domain and sub-domain keys; "-" writes no such label.
	DomainLabel    string `yaml:"domainLabel,omitempty"`
	SubDomainLabel string `yaml:"subDomainLabel,omitempty"`
	// FillTiers gives a node whose switch path is shorter than the
	// fabric's depth its topmost switch at the missing upper tiers, so
	// that every placed node has every tier label: Kueue and KAI leave a
	// node that lacks one level out of topology-aware scheduling
	// (default true).
	FillTiers bool `yaml:"fillTiers"`
}

// DefaultLabelConfig returns the defaults of LabelConfig.
func DefaultLabelConfig() LabelConfig {
	return LabelConfig{Preset: PresetToposcope, FillTiers: true}
}

// Validate reports every invalid field as a config.FieldError.
func (c *LabelConfig) Validate() error {
	var errs []error
	if _, ok := presetKeys(c.Preset); !ok {
		errs = append(errs, config.Errorf("preset", "unknown preset %q (want %s or %s)", c.Preset, PresetToposcope, PresetTopographV1))
	}
	seen := map[string]bool{}
	check := func(field, key string) {
		if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
			errs = append(errs, config.Errorf(field, "%q is not a label key: %s", key, strings.Join(msgs, "; ")))
		}
		if key == keys.Hostname {
			errs = append(errs, config.Errorf(field, "%s is the kubelet's own label", keys.Hostname))
		}
		if seen[key] {
			errs = append(errs, config.Errorf(field, "%q is used twice", key))
		}
		seen[key] = true
	}
	for i, k := range c.TierLabels {
		check(fmt.Sprintf("tierLabels[%d]", i), k)
	}
	if c.DomainLabel != "" && c.DomainLabel != "-" {
		check("domainLabel", c.DomainLabel)
	}
	if c.SubDomainLabel != "" && c.SubDomainLabel != "-" {
		check("subDomainLabel", c.SubDomainLabel)
	}
	return errors.Join(errs...)
}

// Keys resolves the configuration. Call it after Validate.
func (c *LabelConfig) Keys() LabelKeys {
	p, _ := presetKeys(c.Preset)
	k := LabelKeys{tierPrefix: p.tierPrefix, Domain: p.domain, SubDomain: p.subDomain, fill: c.FillTiers}
	if len(c.TierLabels) > 0 {
		k.tierPrefix = ""
		k.tiers = append([]string(nil), c.TierLabels...)
	}
	switch c.DomainLabel {
	case "":
	case "-":
		k.Domain = ""
	default:
		k.Domain = c.DomainLabel
	}
	switch c.SubDomainLabel {
	case "":
	case "-":
		k.SubDomain = ""
	default:
		k.SubDomain = c.SubDomainLabel
	}
	if k.Domain == "" {
		k.SubDomain = "" // like Topograph: no sub-domain without a domain
	}
	return k
}

// LabelKeys are resolved label keys.
type LabelKeys struct {
	tierPrefix string   // preset tiers: prefix + N
	tiers      []string // custom tiers, closest first
	fill       bool
	// Domain and SubDomain are the accelerator keys; empty when not
	// written.
	Domain, SubDomain string
}

// Tier returns the key of tier i (0 = closest to the node), and false
// when tier i is not written.
func (k LabelKeys) Tier(i int) (string, bool) {
	if k.tierPrefix != "" {
		return k.tierPrefix + strconv.Itoa(i), true
	}
	if i < len(k.tiers) {
		return k.tiers[i], true
	}
	return "", false
}

// Tiers returns how many tier labels are written for a fabric of the
// given depth.
func (k LabelKeys) Tiers(depth int) int {
	if k.tierPrefix != "" {
		return depth
	}
	return min(depth, len(k.tiers))
}

// Managed reports whether key is one of the keys these settings write, at
// any tier, so that a stale one is removed. Other keys are never touched.
func (k LabelKeys) Managed(key string) bool {
	if key == "" {
		return false
	}
	if key == k.Domain || key == k.SubDomain {
		return true
	}
	if k.tierPrefix != "" {
		n, ok := strings.CutPrefix(key, k.tierPrefix)
		return ok && n != "" && strings.Trim(n, "0123456789") == "" && (n == "0" || n[0] != '0')
	}
	for _, t := range k.tiers {
		if key == t {
			return true
		}
	}
	return false
}

// NodeLabels returns the managed labels of graph node n, and as
// annotations under the same keys, the full provider ID of each value that
// is not the ID itself (sanitized, shortened or renamed).
func (k LabelKeys) NodeLabels(g *topology.Graph, n *topology.Node) (labels, annotations map[string]string) {
	labels, annotations = map[string]string{}, map[string]string{}
	put := func(key, name, id string) {
		v := LabelValue(name, id)
		labels[key] = v
		if v != id {
			annotations[key] = id
		}
	}
	path := g.Path(n.Name)
	if len(path) > 0 {
		for i := range k.Tiers(g.Depth()) {
			key, _ := k.Tier(i)
			switch {
			case i < len(path):
				put(key, path[i].Name, path[i].ID)
			case k.fill:
				top := path[len(path)-1]
				put(key, top.Name, top.ID)
			}
		}
	}
	if n.Domain != "" && k.Domain != "" {
		d, _ := g.Domain(n.Domain)
		put(k.Domain, d.Name, d.ID)
		if n.SubDomain != "" && k.SubDomain != "" {
			for _, sd := range d.SubDomains {
				if sd.ID == n.SubDomain {
					put(k.SubDomain, sd.Name, sd.ID)
					break
				}
			}
		}
	}
	return labels, annotations
}

// MaxLabelValue is the longest label value Kubernetes accepts.
const MaxLabelValue = validation.LabelValueMaxLength

// labelHashLen is the number of hex digits of the ID's hash in a
// shortened value.
const labelHashLen = 16

// LabelValue returns a valid label value for a switch or domain: name (the
// graph's safe name) when it is one already, and otherwise a readable
// prefix of it, '-', and 16 hex digits of the FNV-64a hash of the full
// provider id: at most 63 characters, starting and ending with a letter or
// digit. The result depends on name and id alone.
func LabelValue(name, id string) string {
	if len(validation.IsValidLabelValue(name)) == 0 && name != "" {
		return name
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	sum := fmt.Sprintf("%0*x", labelHashLen, h.Sum64())
	var b strings.Builder
	for i := 0; i < len(name) && b.Len() < MaxLabelValue-labelHashLen-1; i++ {
		c := name[i]
		switch {
		case isAlnum(c), c == '-', c == '_', c == '.':
			b.WriteByte(c)
		default:
			b.WriteByte('-')
		}
	}
	prefix := strings.TrimRight(strings.TrimLeft(b.String(), "-_."), "-_.")
	if prefix == "" {
		return "x" + sum
	}
	return prefix + "-" + sum
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
