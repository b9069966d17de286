package providers

import (
	"net/http"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
)

// Observer records what providers do against their sources, for
// metrics. Labels are the provider's name and bounded values only; never
// node or instance names.
type Observer interface {
	// APICall records one HTTP exchange with the provider's source:
	// its status (0 when no response came), its duration, and whether
	// the source throttled it (429 or 503).
	APICall(provider string, status int, elapsed time.Duration, throttled bool)
	// Unplaced records the requested nodes the provider's last
	// discovery left unplaced: omitted by the source, or returned
	// without topology.
	Unplaced(provider string, omitted, noTopology int)
}

// nopObserver records nothing.
type nopObserver struct{}

func (nopObserver) APICall(string, int, time.Duration, bool) {}
func (nopObserver) Unplaced(string, int, int)                {}

// Throttled reports whether a response is the source's throttling
// answer; DefaultThrottled is 429 or 503.
type Throttled func(*http.Response) bool

// DefaultThrottled is the Throttled of most sources: 429 or 503.
func DefaultThrottled(resp *http.Response) bool {
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
}

// ObservedTransport returns next (http.DefaultTransport when nil)
// recording every exchange with obs under provider; throttled (default
// DefaultThrottled) recognises the source's throttling answers.
func ObservedTransport(next http.RoundTripper, provider string, obs Observer, throttled ...Throttled) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if obs == nil {
		obs = nopObserver{}
	}
	o := &observed{next: next, provider: provider, obs: obs, now: time.Now, throttled: DefaultThrottled}
	if len(throttled) > 0 && throttled[0] != nil {
		o.throttled = throttled[0]
	}
	return o
}

type observed struct {
	next      http.RoundTripper
	provider  string
	obs       Observer
	now       func() time.Time
	throttled Throttled
}

// RoundTrip implements http.RoundTripper.
func (o *observed) RoundTrip(req *http.Request) (*http.Response, error) {
	start := o.now()
	resp, err := o.next.RoundTrip(req)
	status, throttled := 0, false
	if resp != nil {
		status, throttled = resp.StatusCode, o.throttled(resp)
	}
	o.obs.APICall(o.provider, status, o.now().Sub(start), throttled)
	return resp, err
}

// ObservedClient returns a copy of hc whose transport records every
// exchange with obs under provider.
func ObservedClient(hc *http.Client, provider string, obs Observer, throttled ...Throttled) *http.Client {
	c := *hc
	c.Transport = ObservedTransport(hc.Transport, provider, obs, throttled...)
	return &c
}

// HTTPClient builds the retrying HTTP client of a REST provider from its
// connection settings: secrets are scrubbed from its errors and logs, and
// every exchange is recorded with deps.Observer under provider. A client
// that cannot be built (an unreadable caFile) is a field error on caFile.
func HTTPClient(provider string, conn httpretry.Connection, deps Deps, secrets []string, opts ...httpretry.Option) (*httpretry.Client, error) {
	opts = append(opts, httpretry.WithSecrets(secrets...), httpretry.WithTransport(func(rt http.RoundTripper) http.RoundTripper {
		return ObservedTransport(rt, provider, deps.Observer)
	}))
	c, err := conn.Client(deps.Logger, opts...)
	if err != nil {
		return nil, &config.FieldError{Field: "caFile", Err: err}
	}
	return c, nil
}

// DropObserver is implemented by an Observer that also counts the facts
// a provider dropped instead of failing the discovery (an agent's report
// that is malformed or disagrees with the others). Providers check for
// it with a type assertion, so Observers without it keep working.
type DropObserver interface {
	// Dropped records n nodes whose facts provider dropped, by a
	// bounded reason ("invalid", "fabric_conflict", "rack_conflict").
	Dropped(provider, reason string, n int)
}
