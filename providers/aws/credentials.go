package aws

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"

	"github.com/toposcope/toposcope/providers"
)

// Request credential keys.
const (
	CredAccessKeyID     = "accessKeyId"
	CredSecretAccessKey = "secretAccessKey"
	CredSessionToken    = "sessionToken"
)

// resolveCredentials picks the credentials of a discovery: the
// request's, then the credentials file's, then the environment's
// AWS_ACCESS_KEY_ID, then the SDK's default chain (shared files, IRSA web
// identity, EKS Pod Identity, IMDS). It returns the provider the EC2
// client signs with and what it gave, for scrubbing errors.
func (p *Provider) resolveCredentials(ctx context.Context, rc providers.Credentials) (awssdk.CredentialsProvider, awssdk.Credentials, error) {
	static := func(c awssdk.Credentials) (awssdk.CredentialsProvider, awssdk.Credentials, error) {
		return awssdk.NewCredentialsCache(staticCreds(c)), c, nil
	}
	if rc.Len() > 0 {
		id, okID := rc.Get(CredAccessKeyID)
		secret, okSecret := rc.Get(CredSecretAccessKey)
		tok, _ := rc.Get(CredSessionToken)
		if !okID || !okSecret {
			return nil, awssdk.Credentials{}, fmt.Errorf("%w: request credentials need %s and %s (got keys %v)",
				providers.ErrNoCredentials, CredAccessKeyID, CredSecretAccessKey, rc.Keys())
		}
		return static(awssdk.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: tok, Source: "request"})
	}
	if p.fileCreds != nil {
		return static(*p.fileCreds)
	}
	id, secret := p.getenv("AWS_ACCESS_KEY_ID"), p.getenv("AWS_SECRET_ACCESS_KEY")
	if id != "" && secret != "" {
		return static(awssdk.Credentials{AccessKeyID: id, SecretAccessKey: secret,
			SessionToken: p.getenv("AWS_SESSION_TOKEN"), Source: "environment"})
	}
	prov, got, err := p.chain.credentials(ctx, p.chainProfile())
	if err != nil {
		return nil, awssdk.Credentials{}, fmt.Errorf("%w; give request creds %s and %s, params.credentialsFile, "+
			"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or an identity the SDK finds", err, CredAccessKeyID, CredSecretAccessKey)
	}
	return prov, got, nil
}

// chainProfile is the profile the SDK's chain uses: params.profile
// unless it is the default, when AWS_PROFILE may choose.
func (p *Provider) chainProfile() string {
	if p.cfg.Profile == DefaultConfig().Profile {
		return ""
	}
	return p.cfg.Profile
}

// readCredentialsFile reads one profile of a shared-credentials file.
func readCredentialsFile(path, profile string) (*awssdk.Credentials, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: credentials file: %w", providers.ErrNoCredentials, err)
	}
	vals := map[string]string{}
	in, found := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			in = strings.TrimSpace(strings.Trim(line, "[]")) == profile
			found = found || in
		case in:
			if k, v, ok := strings.Cut(line, "="); ok {
				vals[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: credentials file %s has no profile [%s]", providers.ErrNoCredentials, path, profile)
	}
	var missing []string
	for _, k := range []string{"aws_access_key_id", "aws_secret_access_key"} {
		if vals[k] == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: credentials file %s, profile [%s], lacks %s", providers.ErrNoCredentials, path, profile, strings.Join(missing, " and "))
	}
	return &awssdk.Credentials{AccessKeyID: vals["aws_access_key_id"], SecretAccessKey: vals["aws_secret_access_key"],
		SessionToken: vals["aws_session_token"], Source: "file"}, nil
}
