package aws

import (
	"context"
	"fmt"
	"sync"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/toposcope/toposcope/providers"
)

// ChainLoader loads the AWS SDK's default configuration for a profile
// ("" for the SDK's own choice): its credential chain and its region.
type ChainLoader func(ctx context.Context, profile string) (awssdk.Config, error)

// DefaultChain is the SDK's default chain (aws-sdk-go-v2/config): the
// environment (AWS_ACCESS_KEY_ID ...), the shared config and credentials
// files (AWS_PROFILE, AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE), web
// identity (IRSA: AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN), container
// credentials (EKS Pod Identity and ECS:
// AWS_CONTAINER_CREDENTIALS_FULL_URI with its authorization token), then
// the instance role from IMDS. The region comes from AWS_REGION, the
// shared config, or IMDS. Its calls use the SDK's own HTTP client, which
// honours AWS_CA_BUNDLE.
func DefaultChain() ChainLoader {
	return func(ctx context.Context, profile string) (awssdk.Config, error) {
		opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithEC2IMDSRegion()}
		if profile != "" {
			opts = append(opts, awsconfig.WithSharedConfigProfile(profile))
		}
		return awsconfig.LoadDefaultConfig(ctx, opts...)
	}
}

// WithChain replaces the SDK's default chain; nil turns it off, so that
// only request credentials, credentialsFile and the environment count.
func WithChain(load ChainLoader) Option { return func(p *Provider) { p.chain.load = load } }

// chain loads the SDK configuration once, on first need, and keeps it:
// its credentials provider caches and refreshes what it fetched (a
// web-identity or container token is exchanged again when it expires).
type chain struct {
	load ChainLoader
	mu   sync.Mutex
	cfg  *awssdk.Config
}

// config returns the loaded SDK configuration.
func (c *chain) config(ctx context.Context, profile string) (*awssdk.Config, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg != nil {
		return c.cfg, nil
	}
	if c.load == nil {
		return nil, fmt.Errorf("%w: the SDK's default chain is off", providers.ErrNoCredentials)
	}
	cfg, err := c.load(ctx, profile)
	if err != nil {
		return nil, fmt.Errorf("%w: AWS SDK configuration: %w", providers.ErrNoCredentials, err)
	}
	c.cfg = &cfg
	return c.cfg, nil
}

// credentials returns the chain's credentials, retrieved now so that a
// missing source fails the discovery with ErrNoCredentials before any
// EC2 call.
func (c *chain) credentials(ctx context.Context, profile string) (awssdk.CredentialsProvider, awssdk.Credentials, error) {
	cfg, err := c.config(ctx, profile)
	if err != nil {
		return nil, awssdk.Credentials{}, err
	}
	if cfg.Credentials == nil {
		return nil, awssdk.Credentials{}, fmt.Errorf("%w: the SDK's default chain has no credential source", providers.ErrNoCredentials)
	}
	got, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, awssdk.Credentials{}, fmt.Errorf("%w: the SDK's default chain (environment, shared files, web identity, container, IMDS) found none: %w",
			providers.ErrNoCredentials, err)
	}
	return cfg.Credentials, got, nil
}

// region returns the chain's region, or "".
func (c *chain) region(ctx context.Context, profile string) string {
	cfg, err := c.config(ctx, profile)
	if err != nil {
		return ""
	}
	return cfg.Region
}
