package k8slabels

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
)

// Config is the engine's typed configuration (the `params` of a
// `k8s-labels` engine entry). The client and label settings are inlined:
// `kubeconfig`, `qps`, `preset`, `tierLabels`, ... sit next to `mode`.
type Config struct {
	kubeclient.ClientConfig `yaml:",inline"`
	kube.LabelConfig        `yaml:",inline" request:"true"`
	// Mode is kube.ModeApply (default), kube.ModeDryRun or kube.ModePrint.
	Mode string `yaml:"mode" enum:"apply,dry-run,print"`
	// NodeSelector restricts the engine to the nodes matching a label
	// selector (e.g. "nvidia.com/gpu.present=true"); others are not listed
	// and never written.
	NodeSelector string `yaml:"nodeSelector,omitempty" request:"true"`
	// StripUnplaced also removes the managed labels of nodes that the
	// graph contains but places nowhere (under no switch and in no
	// domain). Default false: a provider that failed to place a node must
	// not unlabel it. Nodes absent from the graph are never written.
	StripUnplaced bool `yaml:"stripUnplaced"`
	// DomainSourceLabel names a node label that already says the node's
	// NVLink domain (nvidia.com/gpu.clique, say): a node that carries it
	// gets no accelerator domain or sub-domain label from the graph, and
	// loses the ones it had; the source label is never touched
	// (Topograph's acceleratorDomainSourceLabel).
	DomainSourceLabel string `yaml:"domainSourceLabel,omitempty" request:"true"`
}

// DefaultConfig returns the configuration used when no params are given.
func DefaultConfig() Config {
	return Config{
		ClientConfig: kubeclient.DefaultClientConfig(),
		LabelConfig:  kube.DefaultLabelConfig(),
		Mode:         kube.ModeApply,
	}
}

// KubeTarget implements kube.Target.
func (c *Config) KubeTarget() (*kubeclient.ClientConfig, *string) { return &c.ClientConfig, &c.Mode }

// CLIFlags implements config.Flagged: kube.CLIFlags.
func (*Config) CLIFlags() []config.Flag { return kube.CLIFlags() }

// Validate reports every invalid field as a config.FieldError.
func (c *Config) Validate() error {
	errs := []error{c.ClientConfig.Validate(), c.LabelConfig.Validate(), kube.CheckMode("mode", c.Mode)}
	if _, err := labels.Parse(c.NodeSelector); err != nil {
		errs = append(errs, config.Errorf("nodeSelector", "%w", err))
	}
	if c.DomainSourceLabel != "" {
		if msgs := validation.IsQualifiedName(c.DomainSourceLabel); len(msgs) > 0 {
			errs = append(errs, config.Errorf("domainSourceLabel", "%q is not a label key: %v", c.DomainSourceLabel, msgs))
		}
		if c.DomainLabel != "" && c.DomainLabel != "-" {
			errs = append(errs, config.Errorf("domainSourceLabel", "cannot be set with domainLabel (Topograph: acceleratorLabel and acceleratorDomainSourceLabel cannot be set together)"))
		}
	}
	return config.Join(errs...)
}
