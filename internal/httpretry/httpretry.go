// Package httpretry is the HTTP client of toposcope's REST providers
// (NetQ, UFM): it retries throttled and failed requests (429 and 5xx,
// and connection failures) with capped exponential backoff and jitter,
// honouring Retry-After, and it builds TLS configurations that verify the
// server by default (a CA file may be given; skipping verification must
// be asked for explicitly and is logged).
//
// Nothing is global: a Client is built with its policy, transport, clock
// and logger. Logs carry the method and the URL without its query or user
// information, never headers or bodies.
package httpretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ErrRetryAfterTooLong is wrapped when the server asks to wait longer
// than the policy's MaxDelay before retrying.
var ErrRetryAfterTooLong = errors.New("server asked to wait longer than the retry limit")

// Doer sends one HTTP request (an *http.Client is one).
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Client sends requests through a Doer, retrying as its Policy says.
type Client struct {
	doer    Doer
	policy  Policy
	sleep   func(ctx context.Context, d time.Duration) error
	jitter  func(d time.Duration) time.Duration
	now     func() time.Time
	log     *slog.Logger
	secrets []string
}

// Option changes a Client built by New.
type Option func(*Client)

// WithSleep replaces the wait between attempts (tests record the delays
// instead of waiting). The function must return ctx's error when ctx ends.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) { c.sleep = sleep }
}

// WithJitter replaces the jitter: given the capped backoff d, it returns
// the delay to wait (default: uniformly random in [d/2, d)).
func WithJitter(jitter func(d time.Duration) time.Duration) Option {
	return func(c *Client) { c.jitter = jitter }
}

// WithClock sets the clock used to read HTTP-date Retry-After values.
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// WithTransport wraps the transport of the *http.Client the Client sends
// through (metrics); other Doers are left as they are.
func WithTransport(wrap func(http.RoundTripper) http.RoundTripper) Option {
	return func(c *Client) {
		if hc, ok := c.doer.(*http.Client); ok {
			cp := *hc
			cp.Transport = wrap(hc.Transport)
			c.doer = &cp
		}
	}
}

// WithLogger sets the logger for retries (default: discard).
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.log = l } }

// New returns a Client sending through doer with policy p (zero fields
// take their defaults).
func New(doer Doer, p Policy, opts ...Option) *Client {
	c := &Client{
		doer:   doer,
		policy: p.WithDefaults(),
		sleep:  SleepContext,
		jitter: EqualJitter,
		now:    time.Now,
		log:    slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// SleepContext waits d or until ctx ends, whichever is first; it returns
// ctx's error when ctx ended.
func SleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// EqualJitter returns a wait from half of d up to d: the equal jitter of
// a capped backoff.
func EqualJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1) // #nosec G404 -- jitter, not security
}

// Retryable reports whether a response status is worth retrying: 429 and
// every 5xx except 501 Not Implemented and 505 HTTP Version Not Supported.
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests ||
		status >= 500 && status != http.StatusNotImplemented && status != http.StatusHTTPVersionNotSupported
}

// Do sends req, retrying on a retryable status or a connection failure
// until the policy's attempts are used up; then it returns the last
// response (with its status, for the caller to report) or the last error.
// A request with a body is retried only when req.GetBody is set (as
// http.NewRequest sets it for in-memory bodies). A TLS verification
// failure is never retried.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 1; ; attempt++ {
		r, err := c.attemptRequest(req, attempt)
		if err != nil {
			return nil, err
		}
		resp, err := c.doer.Do(r)
		retry, wait := c.decide(resp, err, attempt)
		if !retry || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		if wait > c.policy.MaxDelay {
			status := resp.Status
			drain(resp)
			return nil, fmt.Errorf("%s %s: %s: Retry-After %v exceeds %v: %w",
				req.Method, Redact(req.URL), status, wait, c.policy.MaxDelay, ErrRetryAfterTooLong)
		}
		reason := "error"
		if resp != nil {
			reason = resp.Status
			drain(resp)
		} else if err != nil {
			reason = err.Error()
		}
		c.log.Debug("http retry", "method", req.Method, "url", Redact(req.URL), "attempt", attempt,
			"reason", reason, "wait", wait)
		if err := c.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%s %s: %w", req.Method, Redact(req.URL), err)
		}
	}
}

// attemptRequest returns the request for attempt n, with a fresh body.
func (c *Client) attemptRequest(req *http.Request, n int) (*http.Request, error) {
	if n == 1 || req.GetBody == nil {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, fmt.Errorf("%s %s: rewind body: %w", req.Method, Redact(req.URL), err)
	}
	r := req.Clone(req.Context())
	r.Body = body
	return r, nil
}

// decide says whether to retry after attempt n and how long to wait.
func (c *Client) decide(resp *http.Response, err error, n int) (bool, time.Duration) {
	if n >= c.policy.MaxAttempts {
		return false, 0
	}
	if err != nil {
		if !transient(err) {
			return false, 0
		}
		return true, c.backoff(n)
	}
	if !Retryable(resp.StatusCode) {
		return false, 0
	}
	wait := c.backoff(n)
	if ra, ok := retryAfter(resp.Header.Get("Retry-After"), c.now()); ok && ra > wait {
		wait = ra
	}
	return true, wait
}

// backoff is the policy's Delay before attempt n+1, jittered.
func (c *Client) backoff(n int) time.Duration { return c.jitter(c.policy.Delay(n)) }

// retryAfter reads a Retry-After header: delay-seconds or an HTTP-date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// transient reports whether a transport error may go away on retry:
// everything but context ends and TLS verification failures.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return !isTLSVerification(err)
}

// drain discards and closes a response body so the connection is reused.
func drain(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// Redact returns u without user information, query or fragment, for logs
// and errors.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}
