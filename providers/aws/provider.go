// Package aws is the AWS provider: it reads EC2 DescribeInstanceTopology
// (by instance ID, at most 100 per call, or paged over the region) with
// the aws-sdk-go-v2 EC2 client. NetworkNodes (root first in the API)
// become the switch path, closest first; CapacityBlockId (UltraServers)
// becomes the accelerator domain. Instances the API omits or returns
// without NetworkNodes are kept unplaced and reported; a failed page fails
// the discovery. Throttling (RequestLimitExceeded) and 5xx are retried by
// the SDK's standard retryer with capped, jittered exponential backoff.
package aws

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/cloud"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "aws"

// ErrRepeatedToken means EC2 handed out a page token already used.
var ErrRepeatedToken = cloud.ErrRepeatedToken

// API is the part of the EC2 client the provider uses.
type API interface {
	DescribeInstanceTopology(ctx context.Context, in *ec2.DescribeInstanceTopologyInput,
		optFns ...func(*ec2.Options)) (*ec2.DescribeInstanceTopologyOutput, error)
}

// Provider discovers topology from EC2.
type Provider struct {
	cfg       Config
	api       API
	log       *slog.Logger
	getenv    func(string) string
	fileCreds *awssdk.Credentials
	mapping   cloud.Mapping
	obs       providers.Observer
	chain     chain
}

// Option customizes a Provider.
type Option func(*Provider)

// WithAPI replaces the EC2 client (tests).
func WithAPI(api API) Option { return func(p *Provider) { p.api = api } }

// WithGetenv replaces os.Getenv for the environment credentials.
func WithGetenv(f func(string) string) Option { return func(p *Provider) { p.getenv = f } }

// New validates cfg, reads its credentials file, and returns the provider.
func New(cfg Config, deps providers.Deps, opts ...Option) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	deps = deps.WithDefaults()
	p := &Provider{cfg: cfg, log: deps.Logger, obs: deps.Observer, getenv: os.Getenv,
		mapping: cloud.Mapping{Names: cfg.Nodes, ParseID: ParseProviderID},
		chain:   chain{load: DefaultChain()}}
	for _, o := range opts {
		o(p)
	}
	if cfg.Snapshot != nil {
		return p, nil
	}
	if cfg.CredentialsFile != "" {
		c, err := readCredentialsFile(cfg.CredentialsFile, cfg.Profile)
		if err != nil {
			return nil, fmt.Errorf("aws: credentialsFile: %w", err)
		}
		p.fileCreds = c
	}
	if p.api == nil {
		p.api = newClient(cfg, deps.Observer)
	}
	return p, nil
}

// ParseProviderID returns the instance ID of a Kubernetes providerID
// (aws:///<zone>/<id>); other input is returned unchanged.
func ParseProviderID(s string) string {
	if rest, ok := strings.CutPrefix(s, "aws://"); ok {
		return rest[strings.LastIndex(rest, "/")+1:]
	}
	return s
}

// Discover returns the graph of the requested instances (every instance
// of the region with no request). Requested nodes are looked up in their
// own region (nodes[].region of a request), else in params.region, else
// in the SDK's region.
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("aws: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	wanted, allIDs := p.mapping.Want(req)
	var found []cloud.Instance
	var calls int
	var regions []string
	if p.cfg.Snapshot != nil {
		found = fromSnapshot(p.cfg.Snapshot)
	} else {
		byRegion, err := p.regions(ctx, wanted)
		if err != nil {
			return nil, fmt.Errorf("aws: %w", err)
		}
		var optFns []func(*ec2.Options)
		var secrets []string
		if !p.cfg.Anonymous {
			creds, got, err := p.resolveCredentials(ctx, req.Credentials)
			if err != nil {
				return nil, fmt.Errorf("aws: %w", err)
			}
			secrets = []string{got.AccessKeyID, got.SecretAccessKey, got.SessionToken}
			optFns = append(optFns, func(o *ec2.Options) { o.Credentials = creds })
		}
		for _, region := range sortedKeys(byRegion) {
			var ids []string
			if allIDs && len(wanted) > 0 {
				for _, w := range byRegion[region] {
					ids = append(ids, w.InstanceID)
				}
				slices.Sort(ids)
				ids = slices.Compact(ids)
			}
			inRegion := append(slices.Clip(optFns), func(o *ec2.Options) { o.Region = region })
			got, n, err := p.fetch(ctx, ids, inRegion)
			calls += n
			if err != nil {
				return nil, httpretry.ScrubError(fmt.Errorf("aws: %s: %w", region, err), secrets...)
			}
			found = append(found, got...)
			regions = append(regions, region)
		}
	}
	g, rep, err := p.mapping.Assemble(ctx, wanted, found)
	if err != nil {
		return nil, fmt.Errorf("aws: %w", err)
	}
	rep.Log(p.log, Name)
	rep.Record(p.obs, Name)
	p.log.Debug("aws discovery", "regions", regions, "calls", calls, "instances", len(found),
		"nodes", len(g.Nodes()), "switches", len(g.Switches()), "unplaced", rep.Count())
	return g, nil
}

// regions groups the requested nodes by the region to ask: the node's
// own, else params.region, else the SDK's (AWS_REGION, shared config,
// IMDS). With no nodes requested, the one default region is asked for
// everything.
func (p *Provider) regions(ctx context.Context, wanted []cloud.Wanted) (map[string][]cloud.Wanted, error) {
	def := p.cfg.Region
	needDefault := len(wanted) == 0
	for _, w := range wanted {
		needDefault = needDefault || w.Region == ""
	}
	if needDefault && def == "" {
		if def = p.chain.region(ctx, p.chainProfile()); def == "" {
			return nil, config.Errorf("region", "no region: set params.region, give nodes[].region in the request, or AWS_REGION")
		}
	}
	out := map[string][]cloud.Wanted{}
	if len(wanted) == 0 {
		out[def] = nil
	}
	for _, w := range wanted {
		r := w.Region
		if r == "" {
			r = def
		}
		out[r] = append(out[r], w)
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

type staticCreds awssdk.Credentials

func (c staticCreds) Retrieve(context.Context) (awssdk.Credentials, error) {
	return awssdk.Credentials(c), nil
}

// fetch calls DescribeInstanceTopology: for ids in chunks of 100, or
// paged over the region when ids is empty. It returns the instances and
// the number of calls.
func (p *Provider) fetch(ctx context.Context, ids []string, optFns []func(*ec2.Options)) ([]cloud.Instance, int, error) {
	var out []cloud.Instance
	calls := 0
	chunks := [][]string{nil}
	if len(ids) > 0 {
		chunks = slices.Collect(slices.Chunk(ids, maxIDsPerCall))
	}
	for _, chunk := range chunks {
		in := &ec2.DescribeInstanceTopologyInput{InstanceIds: chunk}
		if chunk == nil {
			in.MaxResults = awssdk.Int32(int32(p.cfg.PageSize))
		}
		n, err := cloud.Pages(func(page int, tok string) (string, error) {
			if tok != "" {
				in.NextToken = awssdk.String(tok)
			}
			resp, err := p.api.DescribeInstanceTopology(ctx, in, optFns...)
			if err != nil {
				return "", fmt.Errorf("page %d: %w", page, classify(err))
			}
			for _, t := range resp.Instances {
				out = append(out, fromAPI(t))
			}
			return awssdk.ToString(resp.NextToken), nil
		})
		calls += n
		if err != nil {
			return nil, calls, fmt.Errorf("DescribeInstanceTopology %w", err)
		}
	}
	return out, calls, nil
}

// classify reads the SDK error and wraps it with the shared sentinels
// (providers.Classify).
func classify(err error) error {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return providers.Classify(err, providers.NoAnswer)
	}
	switch ae.ErrorCode() {
	case "AuthFailure", "UnauthorizedOperation", "InvalidClientTokenId", "SignatureDoesNotMatch":
		return fmt.Errorf("EC2: %w", providers.Classify(err, providers.AuthRefused))
	case "RequestLimitExceeded", "Throttling", "InternalError", "ServiceUnavailable", "Unavailable":
		return providers.Classify(err, providers.Retryable)
	}
	return providers.Classify(err, providers.Definite)
}

// NewFactory describes the aws provider to the registry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "EC2 DescribeInstanceTopology: network nodes as tiers, capacity blocks as NVLink domains", exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return New(c, d) })
}
