package httpretry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// MaxResponseBytes caps a JSON response body.
const MaxResponseBytes = 512 << 20

// snippetBytes is how much of an error body StatusError quotes.
const snippetBytes = 300

// StatusError is a response whose status is not 2xx.
type StatusError struct {
	// Method and URL (redacted) of the request.
	Method, URL string
	// StatusCode and Status of the response.
	StatusCode int
	Status     string
	// Body is the start of the response body, secrets scrubbed.
	Body string
}

// Error implements error.
func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("%s %s: %s", e.Method, e.URL, e.Status)
	}
	return fmt.Sprintf("%s %s: %s: %s", e.Method, e.URL, e.Status, e.Body)
}

// Retryable reports whether the status is one Do retries (so the source
// was unavailable rather than the request wrong).
func (e *StatusError) Retryable() bool { return Retryable(e.StatusCode) }

// WithSecrets lists strings (passwords, tokens) that must never appear in
// an error: JSON scrubs them from the response bodies it quotes.
func WithSecrets(secrets ...string) Option {
	return func(c *Client) {
		for _, s := range secrets {
			if s != "" {
				c.secrets = append(c.secrets, s)
			}
		}
	}
}

// JSON sends a request — with in encoded as a JSON body when not nil —
// and decodes a 2xx JSON response into out (when not nil). A non-2xx
// response is a *StatusError; every error names the method and the
// redacted URL.
func (c *Client) JSON(ctx context.Context, method, rawURL string, header http.Header, in, out any) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("%s: bad URL: %w", method, err)
	}
	where := method + " " + Redact(u)
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s: encode request: %w", where, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", where, c.scrubErr(err))
	}
	defer drain(resp)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, snippetBytes))
		return &StatusError{Method: method, URL: Redact(u), StatusCode: resp.StatusCode, Status: resp.Status,
			Body: c.scrub(strings.Join(strings.Fields(string(snippet)), " "))}
	}
	if out == nil {
		return nil
	}
	lr := &io.LimitedReader{R: resp.Body, N: MaxResponseBytes + 1}
	if err := json.NewDecoder(lr).Decode(out); err != nil {
		return fmt.Errorf("%s: decode response: %w", where, c.scrubErr(err))
	}
	if lr.N <= 0 {
		return fmt.Errorf("%s: response larger than %d bytes", where, MaxResponseBytes)
	}
	return nil
}

// scrub replaces every secret in s.
func (c *Client) scrub(s string) string {
	for _, secret := range c.secrets {
		s = strings.ReplaceAll(s, secret, "[REDACTED]")
	}
	return s
}

func (c *Client) scrubErr(err error) error {
	if len(c.secrets) == 0 {
		return err
	}
	if msg := c.scrub(err.Error()); msg != err.Error() {
		return &scrubbed{msg: msg, err: err}
	}
	return err
}

// scrubbed is an error whose text had secrets removed; errors.Is still
// sees the cause.
type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }

// IsRetryableStatus reports whether err is a *StatusError with a status
// Do retries.
func IsRetryableStatus(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Retryable()
}

// ScrubError returns err with every secret replaced in its text;
// errors.Is and errors.As still see the original error.
func ScrubError(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	c := &Client{}
	WithSecrets(secrets...)(c)
	return c.scrubErr(err)
}
