package slurmrest

import (
	"errors"
	"regexp"
	"strings"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
)

// Config says how to reach slurmrestd. It is operator configuration only:
// a request never chooses the URL or the token.
type Config struct {
	// Connection is slurmrestd's base URL (http://host:6820 needs
	// allowHTTP, as the token then travels in clear text), TLS settings,
	// timeout and retry policy.
	httpretry.Connection `yaml:",inline"`
	// TokenFile holds the JSON Web Token sent as X-SLURM-USER-TOKEN:
	// the token alone, or the "SLURM_JWT=..." line `scontrol token`
	// prints. It is read at every call, so a rotated token is picked up,
	// and never logged.
	TokenFile string `yaml:"tokenFile" path:"read"`
	// User is sent as X-SLURM-USER-NAME: the user the token was issued
	// for (`scontrol token username=USER`). Empty sends no name, which
	// slurmrestd accepts when the token names its user.
	User string `yaml:"user,omitempty"`
	// APIVersion is the OpenAPI version to call, "v0.0.38" to
	// "v0.0.44"; empty reads the newest one the server offers from its
	// /openapi/v3 document once.
	APIVersion string `yaml:"apiVersion,omitempty"`
}

// apiVersionRE matches an OpenAPI version of slurmrestd's Slurm paths.
var apiVersionRE = regexp.MustCompile(`^v0\.0\.[0-9]{2}$`)

// Validate reports invalid fields as config.FieldErrors.
func (c *Config) Validate() error {
	errs := []error{c.Connection.Validate()}
	if strings.TrimSpace(c.TokenFile) == "" {
		errs = append(errs, config.Errorf("tokenFile", "is required: a file holding a token from `scontrol token username=USER lifespan=SECONDS`"))
	}
	if c.APIVersion != "" && !apiVersionRE.MatchString(c.APIVersion) {
		errs = append(errs, config.Errorf("apiVersion", "%q is not an OpenAPI version like v0.0.42 (empty: the newest the server offers)", c.APIVersion))
	}
	if strings.ContainsAny(c.User, " \t\r\n:") {
		errs = append(errs, config.Errorf("user", "%q is not a user name", c.User))
	}
	return errors.Join(errs...)
}
