package aws

import (
	"net/http"
	"slices"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/cloud"
)

// newClient builds the EC2 client: the region, the endpoint override,
// and the SDK's standard retryer set to the configured policy (no
// client-side retry quota, so a throttling burst is ridden out).
func newClient(cfg Config, obs providers.Observer) *ec2.Client {
	pol := cfg.Retry.WithDefaults()
	opts := ec2.Options{
		Region:     cfg.Region,
		HTTPClient: &http.Client{Transport: providers.ObservedTransport(http.DefaultTransport.(*http.Transport).Clone(), Name, obs)},
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = pol.MaxAttempts
			o.MaxBackoff = pol.MaxDelay
			o.Backoff = backoff{pol: pol}
			o.RateLimiter = ratelimit.None
		}),
	}
	if cfg.Anonymous {
		opts.Credentials = awssdk.AnonymousCredentials{}
	}
	if cfg.Endpoint != "" {
		opts.BaseEndpoint = awssdk.String(cfg.Endpoint)
	}
	return ec2.New(opts)
}

// backoff is the policy's capped exponential backoff with equal jitter.
type backoff struct{ pol httpretry.Policy }

// BackoffDelay implements retry.BackoffDelayer.
func (b backoff) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	return httpretry.EqualJitter(b.pol.Delay(attempt)), nil
}

// fromAPI reduces an InstanceTopology to the common model.
func fromAPI(t types.InstanceTopology) cloud.Instance {
	in := cloud.Instance{ID: awssdk.ToString(t.InstanceId), Zone: awssdk.ToString(t.AvailabilityZone),
		Domain: awssdk.ToString(t.CapacityBlockId)}
	if in.Domain == "null" { // the CLI's rendering of an absent block
		in.Domain = ""
	}
	if it := awssdk.ToString(t.InstanceType); it != "" {
		in.Attributes = map[string]string{"instanceType": it}
	}
	in.Path = closestFirst(t.NetworkNodes)
	return in
}

func fromSnapshot(s []SnapshotInstance) []cloud.Instance {
	out := make([]cloud.Instance, 0, len(s))
	for _, t := range s {
		out = append(out, fromAPI(types.InstanceTopology{InstanceId: &t.InstanceID, InstanceType: &t.InstanceType,
			AvailabilityZone: &t.AvailabilityZone, NetworkNodes: t.NetworkNodes, CapacityBlockId: &t.CapacityBlockID}))
	}
	return out
}

// closestFirst reverses the API's root-first NetworkNodes, dropping empty
// entries.
func closestFirst(nodes []string) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range slices.Backward(nodes) {
		if n != "" {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
