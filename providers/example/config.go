package example

import (
	"fmt"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/topology"
)

// maxGPUs bounds a node's accelerator count, so that a typo cannot
// overflow a cluster's total.
const maxGPUs = 1024

// Config is the provider's typed configuration: every key it accepts,
// with its YAML name. A key a REST request may set carries
// `request:"true"`; every other key is the operator's alone.
type Config struct {
	// Nodes is the fabric, one entry a node.
	Nodes []NodeSpec `yaml:"nodes"`
	// Zone, when set, is recorded on every node (a request may set it:
	// it is a plain value, not a path, a URL or a credential).
	Zone string `yaml:"zone,omitempty" request:"true"`
}

// NodeSpec is one node of the configuration.
type NodeSpec struct {
	// Name is the scheduler's node name.
	Name string `yaml:"name"`
	// GPUs is the node's accelerator count.
	GPUs int `yaml:"gpus,omitempty"`
	// Path is the node's switches, its leaf first; empty for none.
	Path []string `yaml:"path,omitempty"`
	// Domain is the node's NVLink domain; empty for none.
	Domain string `yaml:"domain,omitempty"`
}

// DefaultConfig returns the defaults: no nodes (Validate then asks for
// some).
func DefaultConfig() Config { return Config{} }

// Validate reports every invalid field as a config.FieldError named by
// its YAML key, joined: the operator sees all of them at once.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Nodes) == 0 {
		errs = append(errs, config.Errorf("nodes", "is required"))
	}
	seen := map[string]bool{}
	for i, n := range c.Nodes {
		key := fmt.Sprintf("nodes[%d]", i)
		if err := topology.CheckNodeName(n.Name); err != nil {
			errs = append(errs, config.Errorf(key+".name", "%w", err))
		} else if seen[n.Name] {
			errs = append(errs, config.Errorf(key+".name", "%q is listed twice", n.Name))
		}
		seen[n.Name] = true
		if n.GPUs < 0 || n.GPUs > maxGPUs {
			errs = append(errs, config.Errorf(key+".gpus", "must be 0 to %d, got %d", maxGPUs, n.GPUs))
		}
		for j, s := range n.Path {
			if s == "" {
				errs = append(errs, config.Errorf(fmt.Sprintf("%s.path[%d]", key, j), "is empty"))
			}
		}
	}
	return config.Join(errs...)
}
