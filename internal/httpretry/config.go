package httpretry

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/toposcope/toposcope/internal/config"
)

// Policy is how a Client retries. It is also the "retry" mapping of a
// REST provider's parameters.
type Policy struct {
	// MaxAttempts is the number of attempts, the first included
	// (default 4; 1 disables retries).
	MaxAttempts int `yaml:"maxAttempts,omitempty"`
	// BaseDelay is the backoff before the second attempt; it doubles
	// for each further one (default 500ms).
	BaseDelay time.Duration `yaml:"baseDelay,omitempty"`
	// MaxDelay caps one backoff (default 30s). A Retry-After longer than
	// MaxDelay ends the retries with ErrRetryAfterTooLong.
	MaxDelay time.Duration `yaml:"maxDelay,omitempty"`
}

// Defaults of Policy.
const (
	DefaultMaxAttempts = 4
	DefaultBaseDelay   = 500 * time.Millisecond
	DefaultMaxDelay    = 30 * time.Second
)

// WithDefaults returns p with each unset field at its default.
func (p Policy) WithDefaults() Policy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	return p
}

// Delay is the capped exponential backoff before attempt n+1 (n ≥ 1):
// BaseDelay·2^(n-1), at most MaxDelay. Callers add EqualJitter.
func (p Policy) Delay(n int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	return min(d, p.MaxDelay)
}

// Validate reports invalid fields as config.FieldErrors (field names
// relative to the policy).
func (p Policy) Validate() error {
	var errs []error
	if p.MaxAttempts < 0 || p.MaxAttempts > 20 {
		errs = append(errs, config.Errorf("maxAttempts", "must be between 1 and 20 (0 for the default %d)", DefaultMaxAttempts))
	}
	if p.BaseDelay < 0 {
		errs = append(errs, config.Errorf("baseDelay", "must not be negative"))
	}
	if p.MaxDelay < 0 {
		errs = append(errs, config.Errorf("maxDelay", "must not be negative"))
	}
	if p.BaseDelay > 0 && p.MaxDelay > 0 && p.BaseDelay > p.MaxDelay {
		errs = append(errs, config.Errorf("baseDelay", "%v is more than maxDelay %v", p.BaseDelay, p.MaxDelay))
	}
	return errors.Join(errs...)
}

// TLSOptions are the TLS settings of a REST provider. Verification is on
// unless InsecureSkipVerify is set.
type TLSOptions struct {
	// CAFile is a PEM file of the CAs that sign the server certificate;
	// it replaces the system roots. Empty uses the system roots.
	CAFile string
	// InsecureSkipVerify turns certificate verification off. It is never
	// the default, and every client built with it logs a warning.
	InsecureSkipVerify bool
}

// TLSConfig builds the TLS configuration: TLS 1.2 or later, the system
// roots or CAFile's, verification on unless explicitly turned off.
func (o TLSOptions) TLSConfig(log *slog.Logger) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s: no PEM certificate in it", o.CAFile)
		}
		cfg.RootCAs = pool
	}
	if o.InsecureSkipVerify {
		if log != nil {
			log.Warn("TLS certificate verification is OFF (insecureSkipVerify): the server's identity is not checked")
		}
		cfg.InsecureSkipVerify = true // #nosec G402 -- explicitly requested and logged
	}
	return cfg, nil
}

// NewHTTPClient returns an *http.Client with the TLS options and a
// timeout per request, on a transport of its own (no global state).
func NewHTTPClient(o TLSOptions, timeout time.Duration, log *slog.Logger) (*http.Client, error) {
	tlsCfg, err := o.TLSConfig(log)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	return &http.Client{Transport: tr, Timeout: timeout}, nil
}

// isTLSVerification reports whether err is a certificate verification
// failure, which no retry can fix.
func isTLSVerification(err error) bool {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var hostname x509.HostnameError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &hostname) || errors.As(err, &verify)
}
