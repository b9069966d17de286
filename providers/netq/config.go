package netq

import (
	"fmt"
	"strings"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/httpretry"
)

// Config is the netq provider's configuration.
type Config struct {
	// Connection holds url (e.g. https://netq.example or the on-prem
	// https://netq:32708), caFile, insecureSkipVerify, allowHTTP, timeout
	// and retry.
	httpretry.Connection `yaml:",inline"`
	// Username and Password (or PasswordFile) log in.
	Username     string `yaml:"username,omitempty"`
	Password     string `yaml:"password,omitempty"`
	PasswordFile string `yaml:"passwordFile,omitempty" path:"read"`
	// Premises lists the premises to use, by name or opid; empty means
	// every premises whose configuration key was viewed.
	Premises []string `yaml:"premises,omitempty" request:"true"`
	// Nodes is a hostlist of the cluster's hosts; empty means every host
	// (tier -1 device) of the graph.
	Nodes string `yaml:"nodes,omitempty" request:"true"`
	// NVLink says whether NetQ NVLink (NMX) is asked for the hosts'
	// NVLink domains: NVLinkAuto (default), NVLinkOn or NVLinkOff.
	NVLink string `yaml:"nvlink,omitempty"`
	// Snapshot, when set, is used instead of asking NetQ: one topology
	// graph, inline (examples, tests, a saved capture).
	Snapshot *Graph `yaml:"snapshot,omitempty"`
	// ComputeNodes, with Snapshot, are NMX's saved compute-node list.
	ComputeNodes []ComputeNode `yaml:"computeNodes,omitempty"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{NVLink: NVLinkAuto} }

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	var errs []error
	if c.Snapshot == nil {
		errs = append(errs, c.Connection.Validate())
		if c.Username == "" {
			errs = append(errs, config.Errorf("username", "is required"))
		}
		errs = append(errs, httpretry.Secret{Value: c.Password, File: c.PasswordFile}.Check("password", "passwordFile", true))
	}
	if err := checkNVLink(c.NVLink); err != nil {
		errs = append(errs, config.Errorf("nvlink", "%v", err))
	}
	for i, p := range c.Premises {
		if strings.TrimSpace(p) == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("premises[%d]", i), "is empty"))
		}
	}
	if c.Nodes != "" {
		if _, err := hostlist.Expand(c.Nodes); err != nil {
			errs = append(errs, config.Errorf("nodes", "%v", err))
		}
	}
	return config.Join(errs...)
}
