package ufm

import (
	"fmt"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers/infiniband"
)

// Values of Config.Auth.
const (
	// AuthBasic is HTTP basic authentication on /ufmRest/….
	AuthBasic = "basic"
	// AuthToken is an access token on /ufmRestV3/…, sent as
	// "Authorization: Basic <token>".
	AuthToken = "token"
)

// Values of Config.SwitchIDs.
const (
	// SwitchIDsGUID names switches by GUID (16 hex digits).
	SwitchIDsGUID = "guid"
	// SwitchIDsName names switches by UFM system_name.
	SwitchIDsName = "name"
)

// Config is the ufm provider's configuration.
type Config struct {
	// Connection holds url, caFile, insecureSkipVerify, allowHTTP,
	// timeout and retry.
	httpretry.Connection `yaml:",inline"`
	// Auth is AuthBasic (default) or AuthToken.
	Auth string `yaml:"auth,omitempty" enum:"basic,token"`
	// Username and Password (or PasswordFile) are the basic-auth
	// credentials.
	Username     string `yaml:"username,omitempty"`
	Password     string `yaml:"password,omitempty"`
	PasswordFile string `yaml:"passwordFile,omitempty" path:"read"`
	// Token (or TokenFile) is the access token for AuthToken.
	Token     string `yaml:"token,omitempty"`
	TokenFile string `yaml:"tokenFile,omitempty" path:"read"`
	// Nodes is a hostlist of the cluster's hosts; empty means every UFM
	// system of type host. Other hosts mark their switch as not part of
	// the cluster's tree.
	Nodes string `yaml:"nodes,omitempty" request:"true"`
	// SwitchIDs is SwitchIDsGUID (default) or SwitchIDsName.
	SwitchIDs string `yaml:"switchIDs,omitempty" request:"true" enum:"guid,name"`
	// NamingRules name a host system's host from its system_name, which
	// UFM takes from the HCA's node description ("<host> <HCA>"), by the
	// infiniband provider's rules: hostPattern, hcas, hcaGUIDs (the
	// system's GUID), ignore and notCompute.
	infiniband.NamingRules `yaml:",inline"`
	// Snapshot, when set, is used instead of asking a server: the
	// systems and links responses, inline (examples, tests, or a saved
	// capture).
	Snapshot *Snapshot `yaml:"snapshot,omitempty"`
}

// Snapshot is a saved pair of UFM responses.
type Snapshot struct {
	Systems []System `yaml:"systems"`
	Links   []Link   `yaml:"links"`
}

// DefaultConfig returns the defaults: basic authentication, GUID switch
// IDs.
func DefaultConfig() Config {
	return Config{Auth: AuthBasic, SwitchIDs: SwitchIDsGUID, NamingRules: infiniband.DefaultNamingRules()}
}

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	var errs []error
	if c.Snapshot == nil {
		errs = append(errs, c.Connection.Validate())
		switch c.Auth {
		case AuthBasic:
			if c.Username == "" {
				errs = append(errs, config.Errorf("username", "is required with auth: basic"))
			}
			errs = append(errs, c.password().Check("password", "passwordFile", true))
		case AuthToken:
			errs = append(errs, c.token().Check("token", "tokenFile", true))
		}
	}
	if c.Auth != AuthBasic && c.Auth != AuthToken {
		errs = append(errs, config.Errorf("auth", "must be %q or %q, not %q", AuthBasic, AuthToken, c.Auth))
	}
	errs = append(errs, c.NamingRules.Validate()...)
	if c.Nodes != "" {
		if _, err := hostlist.Expand(c.Nodes); err != nil {
			errs = append(errs, config.Errorf("nodes", "%v", err))
		}
	}
	if c.SwitchIDs != SwitchIDsGUID && c.SwitchIDs != SwitchIDsName {
		errs = append(errs, config.Errorf("switchIDs", "must be %q or %q, not %q", SwitchIDsGUID, SwitchIDsName, c.SwitchIDs))
	}
	return config.Join(errs...)
}

func (c Config) password() httpretry.Secret {
	return httpretry.Secret{Value: c.Password, File: c.PasswordFile}
}

func (c Config) token() httpretry.Secret { return httpretry.Secret{Value: c.Token, File: c.TokenFile} }

// prefix is the REST prefix of the authentication scheme.
func (c Config) prefix() string {
	if c.Auth == AuthToken {
		return "ufmRestV3"
	}
	return "ufmRest"
}

// String describes the configuration without its secrets.
func (c Config) String() string {
	return fmt.Sprintf("ufm %s (auth %s)", c.URL, c.Auth)
}
