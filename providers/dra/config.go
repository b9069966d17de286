package dra

import (
	"fmt"
	"strings"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
)

// DefaultDriver is the NVIDIA DRA driver for GPUs.
const DefaultDriver = "gpu.nvidia.com"

// Config is the dra provider's configuration (its params).
type Config struct {
	kubeclient.ClientConfig `yaml:",inline"`
	// Driver selects the ResourceSlices read (spec.driver).
	Driver string `yaml:"driver" request:"true"`
	// DomainAttributes name the device attributes whose values, joined
	// with ".", are the node's NVLink domain (default clusterUUID and
	// cliqueID: NVML's fabric identifiers, in the order of the
	// nvidia.com/gpu.clique label). A name without a domain is the
	// driver's, as in DRA's CEL expressions.
	DomainAttributes []string `yaml:"domainAttributes" request:"true"`
	// SubDomainAttribute, when set, names the attribute of the node's
	// sub-domain (e.g. a rack or tray).
	SubDomainAttribute string `yaml:"subDomainAttribute,omitempty" request:"true"`
	// Slices are ResourceSlices given in the parameters instead of read
	// from a cluster (examples, tests).
	Slices []StaticSlice `yaml:"slices,omitempty"`
}

// StaticSlice is one node's devices.
type StaticSlice struct {
	Node    string         `yaml:"node"`
	Devices []StaticDevice `yaml:"devices"`
}

// StaticDevice is one device and its attributes (values as strings).
type StaticDevice struct {
	Name       string            `yaml:"name"`
	Attributes map[string]string `yaml:"attributes,omitempty"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{ClientConfig: kubeclient.DefaultClientConfig(), Driver: DefaultDriver,
		DomainAttributes: []string{"clusterUUID", "cliqueID"}}
}

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	errs := []error{c.ClientConfig.Validate()}
	if strings.TrimSpace(c.Driver) == "" {
		errs = append(errs, config.Errorf("driver", "is required"))
	}
	if len(c.DomainAttributes) == 0 {
		errs = append(errs, config.Errorf("domainAttributes", "needs at least one attribute"))
	}
	for i, a := range c.DomainAttributes {
		if strings.TrimSpace(a) == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("domainAttributes[%d]", i), "is empty"))
		}
	}
	for i, s := range c.Slices {
		if s.Node == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("slices[%d].node", i), "is required"))
		}
	}
	return config.Join(errs...)
}
