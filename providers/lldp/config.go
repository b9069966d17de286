package lldp

import (
	"fmt"
	"net/netip"
	"path"
	"strings"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers/agents"
)

// SNMP versions of SNMP.Version.
const (
	// Version2c authenticates with a community string.
	Version2c = "2c"
	// Version3 authenticates a user (USM), with authentication and,
	// optionally, privacy.
	Version3 = "3"
)

// Defaults of SNMP.
const (
	DefaultPort        = 161
	DefaultTimeout     = 2 * time.Second
	DefaultRetries     = 1
	DefaultMaxHops     = 2
	DefaultMaxSwitches = 1000
	DefaultParallel    = 8
)

// Config is the lldp provider's configuration: where the agents'
// reports come from (the agents provider's keys: the server it runs in,
// a remote server, or inline reports) and, to see above the leaves, SNMP
// read access to the switches.
type Config struct {
	// Config holds the agents provider's keys (server, token, maxAge,
	// nodes, missing, reports): the reports whose LLDP neighbors name
	// the hosts' leaf switches.
	agents.Config `yaml:",inline"`
	// SNMP, when set, walks the LLDP-MIB of the leaf switches the hosts
	// name and of the switches above them. Without it the result is the
	// leaves alone.
	SNMP *SNMP `yaml:"snmp,omitempty"`
}

// SNMP is how the switches' LLDP-MIB is read. Every address it contacts
// is in Networks or in Addresses: a management address that a host's
// report or a switch names elsewhere is never sent a credential.
type SNMP struct {
	// Version is "2c" (default) or "3".
	Version string `yaml:"version,omitempty"`
	// CommunityFile holds the v2c community (one line).
	CommunityFile string `yaml:"communityFile,omitempty" path:"read"`
	// User is the v3 user name.
	User string `yaml:"user,omitempty"`
	// AuthProtocol is the v3 authentication protocol: SHA (default),
	// SHA224, SHA256, SHA384, SHA512 or MD5.
	AuthProtocol string `yaml:"authProtocol,omitempty"`
	// AuthPassphraseFile holds the v3 authentication passphrase; without
	// it the user is noAuthNoPriv.
	AuthPassphraseFile string `yaml:"authPassphraseFile,omitempty" path:"read"`
	// PrivProtocol is the v3 privacy protocol: AES (default), AES192,
	// AES256 or DES.
	PrivProtocol string `yaml:"privProtocol,omitempty"`
	// PrivPassphraseFile holds the v3 privacy passphrase; without it
	// messages are not encrypted.
	PrivPassphraseFile string `yaml:"privPassphraseFile,omitempty" path:"read"`
	// Networks are the prefixes (CIDR) of the switches' management
	// addresses: an address the LLDP frames name is walked only inside
	// them.
	Networks []string `yaml:"networks,omitempty"`
	// Addresses maps a switch's system name to the address to walk it at
	// (host or host:port), for switches that send no management address
	// or one that is not reachable from here.
	Addresses map[string]string `yaml:"addresses,omitempty"`
	// Port is the switches' SNMP port (default 161).
	Port int `yaml:"port,omitempty"`
	// Timeout is one request's (default 2s); Retries how many times it
	// is sent again (default 1).
	Timeout time.Duration `yaml:"timeout,omitempty"`
	Retries int           `yaml:"retries,omitempty"`
	// MaxHops is how many tiers above the leaves are walked (default 2:
	// the leaves and the spines are walked, so cores are seen; 3 for a
	// four-tier fabric).
	MaxHops int `yaml:"maxHops,omitempty"`
	// MaxSwitches caps the switches walked in one discovery (default
	// 1000).
	MaxSwitches int `yaml:"maxSwitches,omitempty"`
	// Parallel is how many switches are walked at once (default 8).
	Parallel int `yaml:"parallel,omitempty"`
	// Exclude are glob patterns of system names (stor-*, border-*) of
	// switches that are never placed nor crossed: storage or border
	// switches a spine also reaches.
	Exclude []string `yaml:"exclude,omitempty"`
}

// DefaultConfig returns the agents provider's defaults and no SNMP.
func DefaultConfig() Config { return Config{Config: agents.DefaultConfig()} }

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	errs := []error{c.Config.Validate()}
	if c.SNMP != nil {
		errs = append(errs, config.PrefixFields("snmp", c.SNMP.Validate()))
	}
	return config.Join(errs...)
}

// withDefaults fills unset values.
func (s SNMP) withDefaults() SNMP {
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if s.Version == "" {
		s.Version = Version2c
	}
	set(&s.Port, DefaultPort)
	set(&s.Retries, DefaultRetries)
	set(&s.MaxHops, DefaultMaxHops)
	set(&s.MaxSwitches, DefaultMaxSwitches)
	set(&s.Parallel, DefaultParallel)
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	return s
}

// Validate reports every invalid field as config.FieldErrors.
func (s *SNMP) Validate() error {
	var errs []error
	switch s.Version {
	case "", Version2c:
		if s.CommunityFile == "" {
			errs = append(errs, config.Errorf("communityFile", "is required with version 2c"))
		}
		if s.User != "" || s.AuthPassphraseFile != "" || s.PrivPassphraseFile != "" {
			errs = append(errs, config.Errorf("user", "user and passphrases are for version 3"))
		}
	case Version3:
		errs = append(errs, s.validateV3()...)
	default:
		errs = append(errs, config.Errorf("version", "%q: want %s or %s", s.Version, Version2c, Version3))
	}
	if len(s.Networks) == 0 && len(s.Addresses) == 0 {
		errs = append(errs, config.Errorf("networks", "is required (or addresses): the switches' management prefixes, outside which no address is contacted"))
	}
	for i, n := range s.Networks {
		if _, err := netip.ParsePrefix(n); err != nil {
			errs = append(errs, config.Errorf(fmt.Sprintf("networks[%d]", i), "%q is not a CIDR prefix: %v", n, err))
		}
	}
	for name, a := range s.Addresses {
		if _, _, err := splitAddress(a, 1); err != nil {
			errs = append(errs, config.Errorf("addresses."+name, "%v", err))
		}
	}
	for i, p := range s.Exclude {
		if _, err := path.Match(p, ""); err != nil {
			errs = append(errs, config.Errorf(fmt.Sprintf("exclude[%d]", i), "%q: %v", p, err))
		}
	}
	for _, n := range []struct {
		key string
		v   int
		max int
	}{{"port", s.Port, 65535}, {"retries", s.Retries, 10}, {"maxHops", s.MaxHops, 8}, {"maxSwitches", s.MaxSwitches, 100000}, {"parallel", s.Parallel, 256}} {
		if n.v < 0 || n.v > n.max {
			errs = append(errs, config.Errorf(n.key, "%d is out of range 0-%d", n.v, n.max))
		}
	}
	if s.Timeout < 0 {
		errs = append(errs, config.Errorf("timeout", "must not be negative, got %s", s.Timeout))
	}
	return config.Join(errs...)
}

func (s SNMP) validateV3() []error {
	var errs []error
	if s.User == "" {
		errs = append(errs, config.Errorf("user", "is required with version 3"))
	}
	if s.CommunityFile != "" {
		errs = append(errs, config.Errorf("communityFile", "is for version 2c"))
	}
	if _, ok := authProtocols[strings.ToUpper(orDefault(s.AuthProtocol, "SHA"))]; !ok {
		errs = append(errs, config.Errorf("authProtocol", "%q: want one of SHA, SHA224, SHA256, SHA384, SHA512, MD5", s.AuthProtocol))
	}
	if _, ok := privProtocols[strings.ToUpper(orDefault(s.PrivProtocol, "AES"))]; !ok {
		errs = append(errs, config.Errorf("privProtocol", "%q: want one of AES, AES192, AES256, DES", s.PrivProtocol))
	}
	if s.PrivPassphraseFile != "" && s.AuthPassphraseFile == "" {
		errs = append(errs, config.Errorf("privPassphraseFile", "needs authPassphraseFile: SNMPv3 has no privacy without authentication"))
	}
	return errs
}

// secret reads a credential file (never logged).
func secret(file string) (string, error) {
	return httpretry.Secret{File: file}.Resolve()
}
