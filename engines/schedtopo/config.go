package schedtopo

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
)

// Scheduler is one consumer of Topology objects.
type Scheduler struct {
	// Engine is the engine name ("kueue", "kai").
	Engine string
	// Group is the API group of its Topology kind.
	Group string
	// Versions are the API versions the engine can write, the default
	// first.
	Versions []string
}

// The schedulers this package writes for.
var (
	// Kueue is kueue.x-k8s.io Topology (cluster-scoped), v1beta2 (Kueue
	// v0.15+, the default) or v1beta1 (v0.14+).
	Kueue = Scheduler{Engine: "kueue", Group: "kueue.x-k8s.io", Versions: []string{"v1beta2", "v1beta1"}}
	// KAI is kai.scheduler/v1alpha1 Topology (cluster-scoped).
	KAI = Scheduler{Engine: "kai", Group: "kai.scheduler", Versions: []string{"v1alpha1"}}
)

// resource is the GroupVersionResource of the Topology kind at version v.
func (s Scheduler) resource(v string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: s.Group, Version: v, Resource: "topologies"}
}

// DefaultName is the default Topology object name.
const DefaultName = "toposcope"

// maxLevels is the most levels Kueue and KAI accept.
const maxLevels = 16

// Config is the typed configuration of the kueue and kai engines. The
// client and label settings are inlined and must equal those of the
// k8s-labels engine that writes the labels.
type Config struct {
	kubeclient.ClientConfig `yaml:",inline"`
	kube.LabelConfig        `yaml:",inline" request:"true"`
	// Mode is kube.ModeApply (default), kube.ModeDryRun or kube.ModePrint.
	Mode string `yaml:"mode" enum:"apply,dry-run,print"`
	// Name is the Topology object's name (default "toposcope"). When the
	// levels change, the object cannot be updated (levels are immutable),
	// so a new object <name>-<hash of the levels> is created instead.
	Name string `yaml:"name"`
	// APIVersion is the version written: v1beta2 (default) or v1beta1 for
	// Kueue, v1alpha1 for KAI.
	APIVersion string `yaml:"apiVersion" request:"true"`
	// FabricLevels publishes the tier labels, coarsest first (default true).
	FabricLevels bool `yaml:"fabricLevels" request:"true"`
	// AcceleratorLevels publishes the accelerator domain and sub-domain
	// labels, below the tiers (default false; when domains cut across
	// leaves, publish them in a second object with fabricLevels: false).
	AcceleratorLevels bool `yaml:"acceleratorLevels" request:"true"`
	// ManageFlavors (kueue only, default false) lets the engine move
	// Kueue onto a new Topology when the levels change: every
	// ResourceFlavor naming an older Topology of this engine is recreated
	// under its own name with spec.topologyName set to the new one, once
	// no admitted Workload uses it (until then a warning names them), and
	// the older Topology is then deleted. Needs the rules of
	// charts/toposcope/rbac/kueue-flavors.yaml.
	ManageFlavors bool `yaml:"manageFlavors"`

	sched Scheduler // set by DefaultConfig
}

// DefaultConfig returns the defaults for scheduler s.
func DefaultConfig(s Scheduler) Config {
	return Config{
		ClientConfig: kubeclient.DefaultClientConfig(),
		LabelConfig:  kube.DefaultLabelConfig(),
		Mode:         kube.ModeApply,
		Name:         DefaultName,
		APIVersion:   s.Versions[0],
		FabricLevels: true,
		sched:        s,
	}
}

// Scheduler is the scheduler the configuration is for.
func (c *Config) Scheduler() Scheduler { return c.sched }

// KubeTarget implements kube.Target.
func (c *Config) KubeTarget() (*kubeclient.ClientConfig, *string) { return &c.ClientConfig, &c.Mode }

// CLIFlags implements config.Flagged: kube.CLIFlags.
func (*Config) CLIFlags() []config.Flag { return kube.CLIFlags() }

// Validate reports every invalid field as a config.FieldError. A Config
// must come from DefaultConfig, which sets its scheduler.
func (c *Config) Validate() error {
	s := c.sched
	if s.Engine == "" {
		return config.Errorf("apiVersion", "configuration not made by DefaultConfig: no scheduler")
	}
	errs := []error{c.ClientConfig.Validate(), c.LabelConfig.Validate(), kube.CheckMode("mode", c.Mode)}
	if !slices.Contains(s.Versions, c.APIVersion) {
		errs = append(errs, config.Errorf("apiVersion", "%s Topology has no version %q (want one of %v)", s.Engine, c.APIVersion, s.Versions))
	}
	// <name>-<16 hex> must still be a valid object name.
	if msgs := validation.IsDNS1123Subdomain(c.Name); len(msgs) > 0 || len(c.Name) > 253-17 {
		errs = append(errs, config.Errorf("name", "%q is not a valid object name of at most %d characters: %v", c.Name, 253-17, msgs))
	}
	if !c.FabricLevels && !c.AcceleratorLevels {
		errs = append(errs, config.Errorf("fabricLevels", "fabricLevels and acceleratorLevels are both false: there is nothing to publish"))
	}
	if c.ManageFlavors && s.Engine != Kueue.Engine {
		errs = append(errs, config.Errorf("manageFlavors", "only the kueue engine has ResourceFlavors to manage"))
	}
	keys := c.Keys()
	if c.AcceleratorLevels && keys.Domain == "" {
		errs = append(errs, config.Errorf("acceleratorLevels", "needs an accelerator domain label (domainLabel is %q)", c.DomainLabel))
	}
	return config.Join(errs...)
}

// String names the object kind, for messages.
func (s Scheduler) String() string { return fmt.Sprintf("%s Topology (%s)", s.Engine, s.Group) }
