package httpretry

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/toposcope/toposcope/internal/config"
)

// DefaultTimeout bounds one HTTP request of a REST provider.
const DefaultTimeout = 30 * time.Second

// Connection is the part of a REST provider's parameters that says how to
// reach the server. Providers inline it (yaml ",inline").
type Connection struct {
	// URL is the server's base URL, https://host[:port][/prefix].
	URL string `yaml:"url"`
	// CAFile is a PEM file of the CAs that sign the server's certificate
	// (default: the system roots).
	CAFile string `yaml:"caFile,omitempty" path:"read"`
	// InsecureSkipVerify turns TLS certificate verification off; a
	// warning is logged whenever a client is built with it.
	InsecureSkipVerify bool `yaml:"insecureSkipVerify,omitempty"`
	// AllowHTTP permits a plain http:// URL, over which credentials
	// travel in clear text (a warning is logged).
	AllowHTTP bool `yaml:"allowHTTP,omitempty"`
	// Timeout bounds one request (default DefaultTimeout).
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// Retry is the retry policy for 429, 5xx and connection failures.
	Retry Policy `yaml:"retry,omitempty"`
}

// Validate reports invalid fields as config.FieldErrors.
func (c Connection) Validate() error {
	var errs []error
	u, err := url.Parse(c.URL)
	switch {
	case strings.TrimSpace(c.URL) == "":
		errs = append(errs, config.Errorf("url", "is required (https://host[:port])"))
	case err != nil:
		errs = append(errs, config.Errorf("url", "%v", err))
	case u.Host == "":
		errs = append(errs, config.Errorf("url", "%q has no host", Redact(u)))
	case u.User != nil:
		errs = append(errs, config.Errorf("url", "must not hold credentials; use the username and password parameters"))
	case u.Scheme == "http" && !c.AllowHTTP:
		errs = append(errs, config.Errorf("url", "plain http would send credentials in clear text: use https, or set allowHTTP: true"))
	case u.Scheme != "https" && u.Scheme != "http":
		errs = append(errs, config.Errorf("url", "scheme %q: want https", u.Scheme))
	}
	if c.Timeout < 0 {
		errs = append(errs, config.Errorf("timeout", "must not be negative"))
	}
	if err := c.Retry.Validate(); err != nil {
		errs = append(errs, config.PrefixFields("retry", err))
	}
	return errors.Join(errs...)
}

// Client builds the retrying client the connection describes.
func (c Connection) Client(log *slog.Logger, opts ...Option) (*Client, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if u, err := url.Parse(c.URL); err == nil && u.Scheme == "http" && log != nil {
		log.Warn("plain http URL: credentials travel in clear text (allowHTTP)", "url", Redact(u))
	}
	hc, err := NewHTTPClient(TLSOptions{CAFile: c.CAFile, InsecureSkipVerify: c.InsecureSkipVerify}, timeout, log)
	if err != nil {
		return nil, err
	}
	return New(hc, c.Retry, append([]Option{WithLogger(log)}, opts...)...), nil
}

// Endpoint joins the base URL and a path.
func (c Connection) Endpoint(path string) string {
	return strings.TrimSuffix(c.URL, "/") + "/" + strings.TrimPrefix(path, "/")
}

// Secret is a credential given inline or in a file; it is never logged.
type Secret struct {
	// Value is the secret itself.
	Value string
	// File is a file holding it (one line; surrounding white space is
	// trimmed).
	File string
}

// Resolve returns the secret, reading File when Value is empty.
func (s Secret) Resolve() (string, error) {
	if s.Value != "" || s.File == "" {
		return s.Value, nil
	}
	data, err := os.ReadFile(s.File)
	if err != nil {
		return "", fmt.Errorf("read secret file: %w", err)
	}
	v := strings.TrimSpace(string(data))
	if v == "" {
		return "", fmt.Errorf("secret file %s is empty", s.File)
	}
	return v, nil
}

// Check reports a missing or doubly given secret as a FieldError on key
// (the value parameter; keyFile is the file parameter).
func (s Secret) Check(key, keyFile string, required bool) error {
	switch {
	case s.Value != "" && s.File != "":
		return config.Errorf(key, "%s and %s are alternatives: set one", key, keyFile)
	case required && s.Value == "" && s.File == "":
		return config.Errorf(key, "is required (or %s)", keyFile)
	}
	return nil
}
