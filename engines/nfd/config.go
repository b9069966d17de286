package nfd

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
)

// DefaultNamespace is where Node Feature Discovery runs by default.
const DefaultNamespace = "node-feature-discovery"

// Config is the engine's typed configuration (the `params` of an `nfd`
// engine entry).
type Config struct {
	kubeclient.ClientConfig `yaml:",inline"`
	// LabelConfig chooses the keys of the node labels requested through
	// spec.labels (with Labels on).
	kube.LabelConfig `yaml:",inline" request:"true"`
	// Mode is kube.ModeApply (default), kube.ModeDryRun or kube.ModePrint.
	Mode string `yaml:"mode" enum:"apply,dry-run,print"`
	// Namespace is NFD's namespace, where nfd-master reads NodeFeature
	// objects (default "node-feature-discovery").
	Namespace string `yaml:"namespace"`
	// Labels also asks nfd-master, through spec.labels, to set the
	// topology labels on the nodes. nfd-master only sets labels in the
	// namespaces it allows: add the preset's (e.g.
	// topology.toposcope.io) to its -extra-label-ns.
	Labels bool `yaml:"labels"`
	// NodeSelector restricts the nodes written (a label selector).
	NodeSelector string `yaml:"nodeSelector,omitempty" request:"true"`
	// Groups also writes a NodeFeatureGroup per switch, NVLink domain and
	// sub-domain, selecting its nodes (default true).
	Groups bool `yaml:"groups"`
	// Cleanup deletes the engine's objects that the graph no longer
	// wants: the NodeFeature of a Kubernetes node the graph no longer
	// holds at all (a node the graph holds but does not place keeps
	// its), and the groups of switches and domains that are gone
	// (default true). The deletions are part of the plan the shrink
	// guard sees.
	Cleanup bool `yaml:"cleanup"`
	// DomainSourceLabel names a node label that already says the node's
	// NVLink domain (nvidia.com/gpu.clique, say): a node that carries it
	// has that value as its accelerator-domain element, and no
	// accelerator-subdomain (Topograph's acceleratorDomainSourceLabel).
	DomainSourceLabel string `yaml:"domainSourceLabel,omitempty" request:"true"`
}

// DefaultConfig returns the configuration used when no params are given.
func DefaultConfig() Config {
	return Config{ClientConfig: kubeclient.DefaultClientConfig(), LabelConfig: kube.DefaultLabelConfig(),
		Mode: kube.ModeApply, Namespace: DefaultNamespace, Groups: true, Cleanup: true}
}

// KubeTarget implements kube.Target.
func (c *Config) KubeTarget() (*kubeclient.ClientConfig, *string) { return &c.ClientConfig, &c.Mode }

// CLIFlags implements config.Flagged: kube.CLIFlags.
func (*Config) CLIFlags() []config.Flag { return kube.CLIFlags() }

// Validate reports every invalid field as a config.FieldError.
func (c *Config) Validate() error {
	errs := []error{c.ClientConfig.Validate(), c.LabelConfig.Validate(), kube.CheckMode("mode", c.Mode)}
	if msgs := validation.IsDNS1123Label(c.Namespace); len(msgs) > 0 {
		errs = append(errs, config.Errorf("namespace", "%q: %v", c.Namespace, msgs))
	}
	if _, err := labels.Parse(c.NodeSelector); err != nil {
		errs = append(errs, config.Errorf("nodeSelector", "%w", err))
	}
	if c.DomainSourceLabel != "" {
		if msgs := validation.IsQualifiedName(c.DomainSourceLabel); len(msgs) > 0 {
			errs = append(errs, config.Errorf("domainSourceLabel", "%q is not a label key: %v", c.DomainSourceLabel, msgs))
		}
	}
	return config.Join(errs...)
}
