package volcano

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/topology"
)

// MaxPrefixLen is the longest prefix: an object name has at most 253
// characters, and a switch's part is its safe name (topology.MaxNameLen)
// with at most a dash and 8 hex digits of hash.
const MaxPrefixLen = validation.DNS1123SubdomainMaxLength - topology.MaxNameLen - 9

// DefaultPrefix starts the name of every HyperNode the engine writes.
const DefaultPrefix = "toposcope-"

// Config is the engine's typed configuration (the `params` of a
// `volcano` engine entry).
type Config struct {
	kubeclient.ClientConfig `yaml:",inline"`
	// Mode is kube.ModeApply (default), kube.ModeDryRun or kube.ModePrint.
	Mode string `yaml:"mode" enum:"apply,dry-run,print"`
	// Prefix starts every HyperNode name (default "toposcope-"), so that
	// the engine's objects never take the name of another writer's.
	Prefix string `yaml:"prefix"`
	// NodeSelector restricts the member nodes (a label selector).
	NodeSelector string `yaml:"nodeSelector,omitempty" request:"true"`
}

// DefaultConfig returns the configuration used when no params are given.
func DefaultConfig() Config {
	return Config{ClientConfig: kubeclient.DefaultClientConfig(), Mode: kube.ModeApply, Prefix: DefaultPrefix}
}

// KubeTarget implements kube.Target.
func (c *Config) KubeTarget() (*kubeclient.ClientConfig, *string) { return &c.ClientConfig, &c.Mode }

// CLIFlags implements config.Flagged: kube.CLIFlags.
func (*Config) CLIFlags() []config.Flag { return kube.CLIFlags() }

// Validate reports every invalid field as a config.FieldError.
func (c *Config) Validate() error {
	errs := []error{c.ClientConfig.Validate(), kube.CheckMode("mode", c.Mode)}
	if c.Prefix != "" {
		if msgs := validation.IsDNS1123Subdomain(c.Prefix + "x"); len(msgs) > 0 || len(c.Prefix) > MaxPrefixLen {
			errs = append(errs, config.Errorf("prefix", "%q cannot start an object name (at most %d characters, then a switch name): %v",
				c.Prefix, MaxPrefixLen, msgs))
		}
	}
	if _, err := labels.Parse(c.NodeSelector); err != nil {
		errs = append(errs, config.Errorf("nodeSelector", "%w", err))
	}
	return config.Join(errs...)
}
