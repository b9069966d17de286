package gcp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/oauth2"
	compute "google.golang.org/api/compute/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
)

// API is one page of instances.list or instances.aggregatedList.
type API interface {
	// ListPage returns one page of a zone's instances and the next token.
	ListPage(ctx context.Context, zone string, size int, token string) ([]*compute.Instance, string, error)
	// AggregatedPage returns one page of the project's instances.
	AggregatedPage(ctx context.Context, size int, token string) ([]*compute.Instance, string, error)
	// Close releases the client.
	Close() error
}

// sdkAPI is API on Google's Compute Engine client for Go
// (google.golang.org/api/compute/v1, the REST API's JSON). The newer
// cloud.google.com/go/compute client reads the same JSON into protocol
// buffers, whose descriptors every command of the binary would build at
// start-up (12 ms and 10 MB of binary, docs/performance.md).
type sdkAPI struct {
	svc     *compute.Service
	project string
	filter  string
	pol     httpretry.Policy
}

// newSDK builds the Compute client for one discovery: endpoint
// override, credentials, and the configured retry policy.
func newSDK(ctx context.Context, cfg Config, accessToken string, obs providers.Observer) (*sdkAPI, error) {
	opts := []option.ClientOption{option.WithScopes(compute.ComputeScope, compute.CloudPlatformScope)}
	var endpoint []option.ClientOption
	if cfg.Endpoint != "" {
		endpoint = append(endpoint, option.WithEndpoint(restBase(cfg.Endpoint)))
	}
	switch {
	case accessToken != "":
		opts = append(opts, option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: accessToken})))
	case cfg.Anonymous:
		opts = append(opts, option.WithoutAuthentication())
	case cfg.CredentialsFile != "":
		opts = append(opts, option.WithAuthCredentialsFile(option.ServiceAccount, cfg.CredentialsFile))
	}
	// Build the authenticated HTTP client, and record every exchange on
	// it for metrics.
	hc, _, err := htransport.NewClient(ctx, append(opts, endpoint...)...)
	if err != nil {
		return nil, err
	}
	svc, err := compute.NewService(ctx, append(endpoint, option.WithHTTPClient(providers.ObservedClient(hc, Name, obs, throttledResponse)))...)
	if err != nil {
		return nil, err
	}
	s := &sdkAPI{svc: svc, project: cfg.Project, pol: cfg.Retry.WithDefaults()}
	if cfg.Filter != "-" {
		s.filter = cfg.Filter
	}
	return s, nil
}

// restBase is the base URL of the Compute REST API under an endpoint
// given as https://host[:port] (the form of compute.googleapis.com).
func restBase(endpoint string) string {
	base := strings.TrimSuffix(endpoint, "/")
	if !strings.HasSuffix(base, "/compute/v1") {
		base += "/compute/v1"
	}
	return base + "/"
}

func (s *sdkAPI) ListPage(ctx context.Context, zone string, size int, token string) ([]*compute.Instance, string, error) {
	c := s.svc.Instances.List(s.project, zone).Context(ctx).MaxResults(int64(size)).PageToken(token)
	if s.filter != "" {
		c = c.Filter(s.filter)
	}
	page, err := retried(ctx, s.pol, func() (*compute.InstanceList, error) { return c.Do() })
	if err != nil {
		return nil, "", err
	}
	return page.Items, page.NextPageToken, nil
}

func (s *sdkAPI) AggregatedPage(ctx context.Context, size int, token string) ([]*compute.Instance, string, error) {
	c := s.svc.Instances.AggregatedList(s.project).Context(ctx).MaxResults(int64(size)).PageToken(token)
	if s.filter != "" {
		c = c.Filter(s.filter)
	}
	page, err := retried(ctx, s.pol, func() (*compute.InstanceAggregatedList, error) { return c.Do() })
	if err != nil {
		return nil, "", err
	}
	var out []*compute.Instance
	for _, scope := range slices.Sorted(maps.Keys(page.Items)) { // zones/sim-east-1a, ... in order
		out = append(out, page.Items[scope].Instances...)
	}
	return out, page.NextPageToken, nil
}

func (s *sdkAPI) Close() error { return nil }

// retried runs call until it succeeds, fails for good, or the policy's
// attempts are spent: 429, 403 rateLimitExceeded/userRateLimitExceeded
// and 5xx are retried with capped exponential backoff and equal jitter.
func retried[T any](ctx context.Context, pol httpretry.Policy, call func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		v, err := call()
		if err == nil || attempt >= pol.MaxAttempts || !retryable(err) {
			return v, err
		}
		if werr := httpretry.SleepContext(ctx, httpretry.EqualJitter(pol.Delay(attempt))); werr != nil {
			return v, errors.Join(err, werr)
		}
	}
}

func retryable(err error) bool {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return false
	}
	return isThrottle(ge) || ge.Code >= 500
}

func isThrottle(ge *googleapi.Error) bool {
	if ge.Code == http.StatusTooManyRequests {
		return true
	}
	if ge.Code == http.StatusForbidden {
		for _, e := range ge.Errors {
			if e.Reason == "rateLimitExceeded" || e.Reason == "userRateLimitExceeded" {
				return true
			}
		}
	}
	return false
}

// throttledResponse is 429, 503, or 403 with reason rateLimitExceeded or
// userRateLimitExceeded; it reads a 403 body and puts it back.
func throttledResponse(resp *http.Response) bool {
	if providers.DefaultThrottled(resp) {
		return true
	}
	if resp.StatusCode != http.StatusForbidden || resp.Body == nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return err == nil && (bytes.Contains(body, []byte(`"rateLimitExceeded"`)) || bytes.Contains(body, []byte(`"userRateLimitExceeded"`)))
}
