package slinky

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/slurm"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
)

// Defaults of Config.
const (
	// DefaultConfigMap is the dedicated ConfigMap the topology file goes
	// to; list it in the Slinky Controller's spec.configFileRefs.
	DefaultConfigMap = "toposcope-topology"
	// DefaultNamespace is the Slinky namespace.
	DefaultNamespace = "slurm"
	// DefaultController is the name of the Slinky Controller.
	DefaultController = "slurm"
	// DefaultPodSelector selects slurm-operator's slurmd pods: the
	// NodeSet pods are labelled app.kubernetes.io/component=worker.
	DefaultPodSelector = "app.kubernetes.io/component=worker"
	// DefaultSlurmVersion is what slurm-operator v1.x requires: the node
	// annotation reaches slurmctld through REST API v0.0.44 (25.11).
	DefaultSlurmVersion = "25.11"
)

// V2511 is the first Slurm series whose REST API (v0.0.44) takes the
// node topology string that Slinky forwards from the node annotation.
const V2511 slurm.Version = 2511

// Config is the engine's typed configuration (the `params` of a `slinky`
// engine entry).
type Config struct {
	kubeclient.ClientConfig `yaml:",inline"`
	// Mode is kube.ModeApply (default), kube.ModeDryRun or kube.ModePrint.
	Mode string `yaml:"mode" enum:"apply,dry-run,print"`
	// Namespace is where the Slinky Controller runs (default "slurm").
	Namespace string `yaml:"namespace"`
	// ConfigMap is the dedicated ConfigMap written (default
	// "toposcope-topology"). It may not be <controller>-config, which the
	// operator owns and rewrites.
	ConfigMap string `yaml:"configMap"`
	// Controller is the Slinky Controller's name (default "slurm").
	Controller string `yaml:"controller"`
	// NodeAnnotations sets topology.slinky.slurm.net/spec on every node the
	// graph places (default true; needs slurm.slurmVersion 25.11 or later).
	NodeAnnotations bool `yaml:"nodeAnnotations"`
	// ConfigUpdateMode is what goes into the ConfigMap: UpdateFull (the
	// default), UpdateSkeleton or UpdateNone. The last two need
	// nodeAnnotations, which then carry each node's place.
	ConfigUpdateMode string `yaml:"configUpdateMode"`
	// NodeSelector restricts the annotated nodes (a label selector).
	NodeSelector string `yaml:"nodeSelector,omitempty" request:"true"`
	// DomainSourceLabel names a node label that says the node's NVLink
	// domain (nvidia.com/gpu.clique, say): the Slurm nodes of a
	// Kubernetes node that carries it are in that domain (no sub-domain),
	// and those of a node without it in none, whatever the graph says
	// (Topograph's acceleratorDomainSourceLabel on its slinky engine).
	DomainSourceLabel string `yaml:"domainSourceLabel,omitempty" request:"true"`
	// PodSelector selects the slurmd pods in Namespace (a label selector,
	// default "app.kubernetes.io/component=worker"). The topology file
	// names each node by the Slurm names of the slurmd pods bound to it
	// (see SlurmName); a node with none is left out, with a warning.
	PodSelector string `yaml:"podSelector"`
	// Slurm are the settings of the topology file, as for the slurm
	// engine (default plugin topology/yaml, slurmVersion 25.11); output
	// and reconfigure are not used.
	Slurm slurm.Config `yaml:"slurm"`
}

// DefaultConfig returns the configuration used when no params are given.
func DefaultConfig() Config {
	s := slurm.DefaultConfig()
	s.Plugin = slurm.PluginYAML
	s.SlurmVersion = DefaultSlurmVersion
	// No scontrol in the service's pod: a topology's partition is read
	// from slurm.slurmrestd or the nodes' attribute.
	s.PartitionCommand = nil
	return Config{
		ClientConfig:     kubeclient.DefaultClientConfig(),
		Mode:             kube.ModeApply,
		Namespace:        DefaultNamespace,
		ConfigMap:        DefaultConfigMap,
		Controller:       DefaultController,
		NodeAnnotations:  true,
		ConfigUpdateMode: UpdateFull,
		PodSelector:      DefaultPodSelector,
		Slurm:            s,
	}
}

// Key is the ConfigMap key: topology.yaml or topology.conf, after the
// Slurm plugin (a YAML document under topology.conf would be parsed as a
// .conf file).
func (c *Config) Key() string {
	if c.Slurm.Plugin == slurm.PluginYAML {
		return "topology.yaml"
	}
	return "topology.conf"
}

// KubeTarget implements kube.Target.
func (c *Config) KubeTarget() (*kubeclient.ClientConfig, *string) { return &c.ClientConfig, &c.Mode }

// CLIFlags implements config.Flagged: kube.CLIFlags.
func (*Config) CLIFlags() []config.Flag { return kube.CLIFlags() }

// Validate reports every invalid field as a config.FieldError.
func (c *Config) Validate() error {
	errs := []error{c.ClientConfig.Validate(), kube.CheckMode("mode", c.Mode), kube.PrefixFields("slurm", c.Slurm.Validate())}
	for _, f := range []struct{ field, value string }{{"namespace", c.Namespace}, {"controller", c.Controller}} {
		if msgs := validation.IsDNS1123Label(f.value); len(msgs) > 0 {
			errs = append(errs, config.Errorf(f.field, "%q: %v", f.value, msgs))
		}
	}
	if msgs := validation.IsDNS1123Subdomain(c.ConfigMap); len(msgs) > 0 {
		errs = append(errs, config.Errorf("configMap", "%q: %v", c.ConfigMap, msgs))
	}
	if c.DomainSourceLabel != "" {
		if msgs := validation.IsQualifiedName(c.DomainSourceLabel); len(msgs) > 0 {
			errs = append(errs, config.Errorf("domainSourceLabel", "%q is not a label key: %v", c.DomainSourceLabel, msgs))
		}
	}
	if c.ConfigMap == c.Controller+"-config" {
		errs = append(errs, config.Errorf("configMap", "%q belongs to the Slinky operator, which replaces its data on every reconcile; use a dedicated ConfigMap (default %q) and list it in the Controller's spec.configFileRefs", c.ConfigMap, DefaultConfigMap))
	}
	if c.Slurm.Output != "" {
		errs = append(errs, config.Errorf("slurm.output", "is not used: the file goes into ConfigMap %q", c.ConfigMap))
	}
	if c.Slurm.Reconfigure {
		errs = append(errs, config.Errorf("slurm.reconfigure", "is not used: Slinky reconfigures slurmctld (controller.inplaceReconfigure)"))
	}
	if v, err := slurm.ParseVersion(c.Slurm.SlurmVersion); err == nil && c.NodeAnnotations && !v.AtLeast(V2511) {
		errs = append(errs, config.Errorf("nodeAnnotations", "Slinky passes the node annotation to slurmctld's REST API v0.0.44, which needs Slurm 25.11 or later; slurm.slurmVersion is %s (set nodeAnnotations: false)", v))
	}
	switch c.ConfigUpdateMode {
	case UpdateFull:
	case UpdateSkeleton, UpdateNone:
		if !c.NodeAnnotations {
			errs = append(errs, config.Errorf("configUpdateMode", "%s leaves the nodes' places to their annotations: it needs nodeAnnotations: true", c.ConfigUpdateMode))
		}
	default:
		errs = append(errs, config.Errorf("configUpdateMode", "must be %s, %s or %s, got %q", UpdateFull, UpdateSkeleton, UpdateNone, c.ConfigUpdateMode))
	}
	if _, err := labels.Parse(c.NodeSelector); err != nil {
		errs = append(errs, config.Errorf("nodeSelector", "%w", err))
	}
	if sel, err := labels.Parse(c.PodSelector); err != nil {
		errs = append(errs, config.Errorf("podSelector", "%w", err))
	} else if sel.Empty() {
		errs = append(errs, config.Errorf("podSelector", "must select the slurmd pods (default %q): an empty selector takes every pod of namespace %q, the controller's and login pods' too", DefaultPodSelector, c.Namespace))
	}
	return config.Join(errs...)
}
