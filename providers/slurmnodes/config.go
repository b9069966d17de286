package slurmnodes

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/slurmrest"
)

// Where a node's instance ID is read (Config.InstanceID).
const (
	// FromInstanceID is Slurm's own InstanceId field (Slurm 23.11 and
	// later; cloud power-saving scripts set it with scontrol update).
	FromInstanceID = "instance-id"
	// FromFeature is a node feature KEY=VALUE, KEY being InstanceIDFeature.
	FromFeature = "feature"
	// FromComment is the node's Comment.
	FromComment = "comment"
	// FromExtra is the node's Extra field.
	FromExtra = "extra"
	// FromName is the node name itself.
	FromName = "name"
	// FromNone gives no instance ID: the inner provider matches by name.
	FromNone = "none"
)

// Inner names the provider that discovers the topology of Slurm's nodes.
type Inner struct {
	// Name is the registered provider name.
	Name string `yaml:"name"`
	// Params are its parameters (a mapping).
	Params yaml.Node `yaml:"params,omitempty"`
}

// Config is the slurm-nodes provider's configuration.
type Config struct {
	// Command prints Slurm's nodes: `scontrol --json show nodes` (Slurm
	// 23.02 and later; the default) or `scontrol -o show nodes` (any
	// release; 22.05 has no --json). The format is read from the output.
	Command config.Command `yaml:"command,omitempty"`
	// OutputText is that output given inline, instead of a command.
	OutputText string `yaml:"outputText,omitempty"`
	// Slurmrestd reads the nodes from Slurm's REST API with a JSON Web
	// Token instead of a command: for a service with no scontrol at hand
	// (a Slinky cluster's pod).
	Slurmrestd *slurmrest.Config `yaml:"slurmrestd,omitempty"`
	// Timeout bounds the command (default 30s).
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// Partitions keeps the nodes of these partitions only (default all).
	Partitions []string `yaml:"partitions,omitempty" request:"true"`
	// InstanceID says where a node's instance ID is: FromInstanceID
	// (default), FromFeature, FromComment, FromExtra, FromName or FromNone.
	InstanceID string `yaml:"instanceID,omitempty"`
	// InstanceIDFeature is the feature key with FromFeature (default
	// "instance-id": a feature "instance-id=i-0abc").
	InstanceIDFeature string `yaml:"instanceIDFeature,omitempty"`
	// Region is the nodes' cloud region, when they carry none.
	Region string `yaml:"region,omitempty" request:"true"`
	// RegionFeature is a feature key whose value is a node's region
	// (a feature "region=us-east-1"); it wins over Region.
	RegionFeature string `yaml:"regionFeature,omitempty"`
	// Provider discovers the topology of the nodes Slurm lists.
	Provider Inner `yaml:"provider"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Command:           config.Command{"scontrol", "--json", "show", "nodes"},
		Timeout:           30 * time.Second,
		InstanceID:        FromInstanceID,
		InstanceIDFeature: "instance-id",
	}
}

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	var errs []error
	switch {
	case c.Slurmrestd != nil && c.OutputText != "":
		errs = append(errs, config.Errorf("slurmrestd", "and outputText are alternatives: set one"))
	case c.Slurmrestd != nil:
		if err := c.Slurmrestd.Validate(); err != nil {
			errs = append(errs, config.PrefixFields("slurmrestd", err))
		}
	case c.OutputText == "":
		errs = append(errs, c.Command.Check("command"))
		if len(c.Command) == 0 {
			errs = append(errs, config.Errorf("command", "required (or outputText)"))
		}
	}
	if c.Timeout <= 0 {
		errs = append(errs, config.Errorf("timeout", "must be positive, got %s", c.Timeout))
	}
	switch c.InstanceID {
	case FromInstanceID, FromFeature, FromComment, FromExtra, FromName, FromNone:
	default:
		errs = append(errs, config.Errorf("instanceID", "must be one of %s, got %q",
			strings.Join([]string{FromInstanceID, FromFeature, FromComment, FromExtra, FromName, FromNone}, ", "), c.InstanceID))
	}
	if c.InstanceID == FromFeature && c.InstanceIDFeature == "" {
		errs = append(errs, config.Errorf("instanceIDFeature", "required with instanceID: feature"))
	}
	switch c.Provider.Name {
	case "":
		errs = append(errs, config.Errorf("provider.name", "required: the provider that discovers the nodes' topology"))
	case Name:
		errs = append(errs, config.Errorf("provider.name", "%s cannot wrap itself", Name))
	}
	if k := c.Provider.Params.Kind; k != 0 && k != yaml.MappingNode {
		errs = append(errs, config.Errorf("provider.params", "must be a mapping"))
	}
	return config.Join(errs...)
}

// feature returns the value of the feature key=value among features.
func feature(features []string, key string) (string, bool) {
	for _, f := range features {
		if k, v, ok := strings.Cut(f, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// source describes the configuration's node source for messages.
func (c *Config) source() string {
	if c.OutputText != "" {
		return "outputText"
	}
	if c.Slurmrestd != nil {
		return "slurmrestd " + c.Slurmrestd.URL
	}
	return fmt.Sprintf("command %q", c.Command.String())
}
