package k8slabels

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/providers/nvlink"
	"github.com/toposcope/toposcope/topology"
)

// Values of Config.Tiers: which labels give a node's switch path.
const (
	// TiersAuto reads the AWS labels on a node that has them and the GKE
	// labels on a node that has those; a node with both is an error.
	TiersAuto = "auto"
	// TiersAWS reads topology.k8s.aws/network-node-layer-1..4.
	TiersAWS = "aws"
	// TiersGKE reads cloud.google.com/gce-topology-block and -subblock
	// (and -host with Config.GKEHost).
	TiersGKE = "gke"
	// TiersCrusoe reads crusoe.ai/ib.partition.id (top) and
	// crusoe.ai/pod.id, and puts a node without the pod label under
	// Config.PlaceholderSwitch.
	TiersCrusoe = "crusoe"
	// TiersCustom reads Config.TierLabels.
	TiersCustom = "custom"
	// TiersNone builds no switch tree.
	TiersNone = "none"
)

// Well-known label keys.
const (
	// AWSLayerPrefix is followed by 1..4; layer 1 is the top of the
	// hierarchy, the highest layer present is closest to the instance.
	AWSLayerPrefix = "topology.k8s.aws/network-node-layer-"
	// AWSLayers is the deepest AWS layer.
	AWSLayers = 4
	// GKEBlockLabel, GKESubblockLabel and GKEHostLabel are GKE's
	// physical-topology labels, top first.
	GKEBlockLabel    = "cloud.google.com/gce-topology-block"
	GKESubblockLabel = "cloud.google.com/gce-topology-subblock"
	GKEHostLabel     = "cloud.google.com/gce-topology-host"
	// CrusoePartitionLabel and CrusoePodLabel are the InfiniBand
	// locality Crusoe Cloud puts on every Node that has InfiniBand: the
	// partition (no traffic crosses it) above the pod (a leaf switch
	// group).
	CrusoePartitionLabel = "crusoe.ai/ib.partition.id"
	CrusoePodLabel       = "crusoe.ai/pod.id"
	// DefaultPlaceholderSwitch is the switch of tiers: crusoe that a
	// node without InfiniBand labels (a CPU node, a GPU type without
	// InfiniBand) is put under.
	DefaultPlaceholderSwitch = "no-infiniband"
	// GPUResource is the extended resource counted as the node's GPUs.
	GPUResource = "nvidia.com/gpu"
)

// WatchKeys are the Node labels and annotations the provider reads with
// its defaults: the tier labels of every Tiers value but TiersCustom,
// the clique label and the agents' clique and rack annotations, and what
// identifies a node's instance (kubeclient.InstanceKeys). A change to
// one of them changes what Discover answers, so the node watcher of
// `toposcope serve` watches them. Keys the operator configures
// (TierLabels, a DomainLabel or SubDomainLabel of their own) are not
// among them: kubernetes.watchKeys names those.
func WatchKeys() []string {
	return append([]string{
		AWSLayerPrefix + "*",
		GKEBlockLabel, GKESubblockLabel, GKEHostLabel,
		CrusoePartitionLabel, CrusoePodLabel,
		nvlink.CliqueLabel, keys.NVLinkClique, keys.NVLinkRack, keys.TopographClusterID,
	}, kubeclient.InstanceKeys()...)
}

// NoLabel is the DomainLabel that reads no accelerator domain.
const NoLabel = "-"

// StaticNode is a Kubernetes Node given inline instead of read from a
// cluster (examples, tests, and what an operator exported).
type StaticNode struct {
	// Name is the Node's name.
	Name string `yaml:"name"`
	// Labels are the Node's labels.
	Labels map[string]string `yaml:"labels,omitempty"`
	// Annotations are the Node's annotations (toposcope.io/instance-id).
	Annotations map[string]string `yaml:"annotations,omitempty"`
	// ProviderID is the Node's spec.providerID.
	ProviderID string `yaml:"providerID,omitempty"`
	// GPUs is the Node's nvidia.com/gpu capacity.
	GPUs int `yaml:"gpus,omitempty"`
}

// Config is the k8slabels provider's configuration.
type Config struct {
	kubeclient.ClientConfig `yaml:",inline"`
	// NodeSelector restricts the provider to the Nodes matching a label
	// selector; others are not listed.
	NodeSelector string `yaml:"nodeSelector,omitempty" request:"true"`
	// Tiers is TiersAuto (default), TiersAWS, TiersGKE, TiersCustom or
	// TiersNone.
	Tiers string `yaml:"tiers" request:"true"`
	// TierLabels are the keys of TiersCustom, closest to the node first
	// (the order of the k8s-labels engine's tierLabels).
	TierLabels []string `yaml:"tierLabels,omitempty" request:"true"`
	// PlaceholderSwitch is, with TiersCrusoe, the switch that a node
	// without crusoe.ai/pod.id (no InfiniBand) is put under, so that a
	// scheduler still places it (as one group, with no locality);
	// DefaultPlaceholderSwitch when empty; NoLabel leaves such nodes
	// under no switch.
	PlaceholderSwitch string `yaml:"placeholderSwitch,omitempty" request:"true"`
	// GKEHost adds cloud.google.com/gce-topology-host as the lowest tier.
	GKEHost bool `yaml:"gkeHost" request:"true"`
	// Qualify makes the ID of every switch below the top one
	// "<parent ID>/<value>", for label values that are unique only
	// within their parent (racks numbered per block). Default false: a
	// value seen under two parents is an error.
	Qualify bool `yaml:"qualify" request:"true"`
	// DomainLabel is the key of the accelerator domain (default
	// nvidia.com/gpu.clique, parsed as <ClusterUUID>.<CliqueID>; any
	// other key is taken as it is); NoLabel reads none.
	DomainLabel string `yaml:"domainLabel" request:"true"`
	// SubDomainLabel is the key of the sub-domain (a rack); empty reads
	// none.
	SubDomainLabel string `yaml:"subDomainLabel,omitempty" request:"true"`
	// AgentAnnotations reads the NVLink clique and rack that `toposcope
	// agent --annotate` wrote (toposcope.io/nvlink-clique,
	// toposcope.io/nvlink-rack) on Nodes without the clique label, when
	// DomainLabel is nvidia.com/gpu.clique (default true).
	AgentAnnotations bool `yaml:"agentAnnotations" request:"true"`
	// Nodes, when set, are used instead of a cluster's Nodes; no
	// kubeconfig is read.
	Nodes []StaticNode `yaml:"nodes,omitempty" request:"true"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{ClientConfig: kubeclient.DefaultClientConfig(), Tiers: TiersAuto, DomainLabel: nvlink.CliqueLabel, AgentAnnotations: true}
}

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	errs := []error{c.ClientConfig.Validate()}
	if _, err := labels.Parse(c.NodeSelector); err != nil {
		errs = append(errs, config.Errorf("nodeSelector", "%w", err))
	}
	switch c.Tiers {
	case TiersAuto, TiersAWS, TiersGKE, TiersCrusoe, TiersNone:
		if len(c.TierLabels) > 0 {
			errs = append(errs, config.Errorf("tierLabels", "needs tiers: %s (tiers is %q)", TiersCustom, c.Tiers))
		}
	case TiersCustom:
		if len(c.TierLabels) == 0 {
			errs = append(errs, config.Errorf("tierLabels", "tiers: %s needs at least one key", TiersCustom))
		}
	default:
		hint := ""
		if s := config.Suggest(c.Tiers, []string{TiersAuto, TiersAWS, TiersGKE, TiersCrusoe, TiersCustom, TiersNone}); s != "" {
			hint = fmt.Sprintf("; did you mean %q?", s)
		}
		errs = append(errs, config.Errorf("tiers", "must be %s, %s, %s, %s, %s or %s, got %q%s",
			TiersAuto, TiersAWS, TiersGKE, TiersCrusoe, TiersCustom, TiersNone, c.Tiers, hint))
	}
	if c.PlaceholderSwitch != "" {
		switch {
		case c.Tiers != TiersCrusoe:
			errs = append(errs, config.Errorf("placeholderSwitch", "needs tiers: %s (tiers is %q)", TiersCrusoe, c.Tiers))
		case c.PlaceholderSwitch != NoLabel && topology.SafeName(c.PlaceholderSwitch) != c.PlaceholderSwitch:
			errs = append(errs, config.Errorf("placeholderSwitch", "%q is not a switch name (letters, digits, '-' and '_', at most %d)",
				c.PlaceholderSwitch, topology.MaxNameLen))
		}
	}
	if c.GKEHost && c.Tiers != TiersAuto && c.Tiers != TiersGKE {
		errs = append(errs, config.Errorf("gkeHost", "needs tiers: %s or %s", TiersAuto, TiersGKE))
	}
	seen := map[string]string{}
	checkKey := func(field, key string) {
		if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
			errs = append(errs, config.Errorf(field, "%q is not a label key: %s", key, strings.Join(msgs, "; ")))
		}
		if other, ok := seen[key]; ok {
			errs = append(errs, config.Errorf(field, "%q is also %s", key, other))
		}
		seen[key] = field
	}
	for i, k := range c.TierLabels {
		checkKey(fmt.Sprintf("tierLabels[%d]", i), k)
	}
	switch c.DomainLabel {
	case NoLabel:
		if c.SubDomainLabel != "" {
			errs = append(errs, config.Errorf("subDomainLabel", "needs a domainLabel"))
		}
	case "":
		errs = append(errs, config.Errorf("domainLabel", "must be a label key or %q", NoLabel))
	default:
		checkKey("domainLabel", c.DomainLabel)
	}
	if c.SubDomainLabel != "" {
		checkKey("subDomainLabel", c.SubDomainLabel)
	}
	names := map[string]bool{}
	for i, n := range c.Nodes {
		field := fmt.Sprintf("nodes[%d]", i)
		if err := topology.CheckNodeName(n.Name); err != nil {
			errs = append(errs, config.Errorf(field+".name", "%v", err))
		}
		if names[n.Name] {
			errs = append(errs, config.Errorf(field+".name", "node %q is listed twice", n.Name))
		}
		names[n.Name] = true
		if n.GPUs < 0 {
			errs = append(errs, config.Errorf(field+".gpus", "must not be negative"))
		}
	}
	return config.Join(errs...)
}

// tierKeys returns the keys of a tiers mode, top first, or nil for
// TiersAuto and TiersNone.
func (c *Config) tierKeys(mode string) []string {
	switch mode {
	case TiersAWS:
		keys := make([]string, AWSLayers)
		for i := range keys {
			keys[i] = fmt.Sprintf("%s%d", AWSLayerPrefix, i+1)
		}
		return keys
	case TiersCrusoe:
		return []string{CrusoePartitionLabel, CrusoePodLabel}
	case TiersGKE:
		keys := []string{GKEBlockLabel, GKESubblockLabel}
		if c.GKEHost {
			keys = append(keys, GKEHostLabel)
		}
		return keys
	case TiersCustom:
		keys := make([]string, len(c.TierLabels))
		for i, k := range c.TierLabels {
			keys[len(keys)-1-i] = k
		}
		return keys
	}
	return nil
}

// placeholder returns the switch a node without fabric labels is put
// under ("" for none): with TiersCrusoe, PlaceholderSwitch or its default.
func (c *Config) placeholder() string {
	if c.Tiers != TiersCrusoe || c.PlaceholderSwitch == NoLabel {
		return ""
	}
	if c.PlaceholderSwitch == "" {
		return DefaultPlaceholderSwitch
	}
	return c.PlaceholderSwitch
}
