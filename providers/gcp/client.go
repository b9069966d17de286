package gcp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	compute "cloud.google.com/go/compute/apiv1"
	"cloud.google.com/go/compute/apiv1/computepb"
	"github.com/googleapis/gax-go/v2"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"
	"google.golang.org/protobuf/proto"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
)

// API is one page of instances.list or instances.aggregatedList.
type API interface {
	// ListPage returns one page of a zone's instances and the next token.
	ListPage(ctx context.Context, zone string, size int, token string) ([]*computepb.Instance, string, error)
	// AggregatedPage returns one page of the project's instances.
	AggregatedPage(ctx context.Context, size int, token string) ([]*computepb.Instance, string, error)
	// Close releases the client.
	Close() error
}

// sdkAPI is API on the Compute REST client.
type sdkAPI struct {
	c       *compute.InstancesClient
	project string
	filter  *string
	retry   gax.CallOption
}

// newSDK builds the Compute REST client for one discovery: endpoint
// override, credentials, and the configured retry policy in place of the
// SDK's default (which retries 503/504 for up to 600 s).
func newSDK(ctx context.Context, cfg Config, accessToken string, obs providers.Observer) (*sdkAPI, error) {
	opts := []option.ClientOption{option.WithScopes(compute.DefaultAuthScopes()...)}
	var endpoint []option.ClientOption
	if cfg.Endpoint != "" {
		endpoint = append(endpoint, option.WithEndpoint(cfg.Endpoint))
	}
	switch {
	case accessToken != "":
		opts = append(opts, option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: accessToken})))
	case cfg.Anonymous:
		opts = append(opts, option.WithoutAuthentication())
	case cfg.CredentialsFile != "":
		opts = append(opts, option.WithAuthCredentialsFile(option.ServiceAccount, cfg.CredentialsFile))
	}
	// Build the authenticated HTTP client as the REST client would, and
	// record every exchange on it for metrics.
	hc, _, err := htransport.NewClient(ctx, append(opts, endpoint...)...)
	if err != nil {
		return nil, err
	}
	c, err := compute.NewInstancesRESTClient(ctx, append(endpoint, option.WithHTTPClient(providers.ObservedClient(hc, Name, obs, throttledResponse)))...)
	if err != nil {
		return nil, err
	}
	pol := cfg.Retry.WithDefaults()
	retry := gax.WithRetry(func() gax.Retryer { return &retryer{pol: pol} })
	c.CallOptions.List = []gax.CallOption{retry}
	c.CallOptions.AggregatedList = []gax.CallOption{retry}
	// The REST iterators do not apply CallOptions themselves: pass the
	// retry option on every call too.
	s := &sdkAPI{c: c, project: cfg.Project, retry: retry}
	if cfg.Filter != "-" && cfg.Filter != "" {
		s.filter = proto.String(cfg.Filter)
	}
	return s, nil
}

func (s *sdkAPI) ListPage(ctx context.Context, zone string, size int, token string) ([]*computepb.Instance, string, error) {
	req := &computepb.ListInstancesRequest{Project: s.project, Zone: zone, Filter: s.filter}
	return s.c.List(ctx, req, s.retry).InternalFetch(size, token)
}

func (s *sdkAPI) AggregatedPage(ctx context.Context, size int, token string) ([]*computepb.Instance, string, error) {
	req := &computepb.AggregatedListInstancesRequest{Project: s.project, Filter: s.filter}
	pairs, next, err := s.c.AggregatedList(ctx, req, s.retry).InternalFetch(size, token)
	if err != nil {
		return nil, "", err
	}
	var out []*computepb.Instance
	for _, p := range pairs {
		out = append(out, p.Value.GetInstances()...)
	}
	return out, next, nil
}

func (s *sdkAPI) Close() error { return s.c.Close() }

// retryer retries 429, 403 rateLimitExceeded/userRateLimitExceeded and
// 5xx with capped exponential backoff and equal jitter.
type retryer struct {
	pol     httpretry.Policy
	attempt int
}

// Retry implements gax.Retryer.
func (r *retryer) Retry(err error) (time.Duration, bool) {
	r.attempt++
	if r.attempt >= r.pol.MaxAttempts || !retryable(err) {
		return 0, false
	}
	return httpretry.EqualJitter(r.pol.Delay(r.attempt)), true
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
