package kueuebudgets

import (
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
)

// Defaults of Config.
const (
	// DefaultFlavor is the ResourceFlavor the quotas name.
	DefaultFlavor = "default-flavor"
	// DefaultResource is the resource whose quota the budgets divide.
	DefaultResource = "nvidia.com/gpu"
	// DefaultRoot is the root Cohort above the top-level accounts.
	DefaultRoot = "toposcope"
)

// Config is the typed configuration of the kueue-budgets engine.
type Config struct {
	kubeclient.ClientConfig `yaml:",inline"`
	// Mode is kube.ModeApply (default), kube.ModeDryRun or kube.ModePrint.
	Mode string `yaml:"mode"`
	// Flavor is the ResourceFlavor every ClusterQueue's quota names
	// (default "default-flavor"; for topology-aware scheduling, the
	// flavor whose topologyName is the kueue engine's Topology). The
	// engine does not write it; apply warns when it is missing.
	Flavor string `yaml:"flavor"`
	// Resource is the resource whose quota the budgets divide (default
	// nvidia.com/gpu): the cluster's GPUs, counted from the graph.
	Resource string `yaml:"resource"`
	// Root is the name of the Cohort above the top-level accounts
	// (default "toposcope"); no account may have this name.
	Root string `yaml:"root"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		ClientConfig: kubeclient.DefaultClientConfig(),
		Mode:         kube.ModeApply,
		Flavor:       DefaultFlavor,
		Resource:     DefaultResource,
		Root:         DefaultRoot,
	}
}

// KubeTarget implements kube.Target.
func (c *Config) KubeTarget() (*kubeclient.ClientConfig, *string) { return &c.ClientConfig, &c.Mode }

// CLIFlags implements config.Flagged: kube.CLIFlags.
func (*Config) CLIFlags() []config.Flag { return kube.CLIFlags() }

// Validate reports every invalid field as a config.FieldError.
func (c *Config) Validate() error {
	errs := []error{c.ClientConfig.Validate(), kube.CheckMode("mode", c.Mode)}
	for field, v := range map[string]string{"flavor": c.Flavor, "root": c.Root} {
		if msgs := validation.IsDNS1123Subdomain(v); len(msgs) > 0 {
			errs = append(errs, config.Errorf(field, "%q is not a valid object name: %v", v, msgs))
		}
	}
	if msgs := validation.IsQualifiedName(c.Resource); len(msgs) > 0 {
		errs = append(errs, config.Errorf("resource", "%q is not a resource name: %v", c.Resource, msgs))
	}
	return config.Join(errs...)
}
