package aws

import (
	"bufio"
	"bytes"
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

// resolveCredentials picks the credentials of a discovery: the request's,
// then the credentials file's, then the environment's.
func (p *Provider) resolveCredentials(rc providers.Credentials) (awssdk.Credentials, error) {
	if rc.Len() > 0 {
		id, okID := rc.Get(CredAccessKeyID)
		secret, okSecret := rc.Get(CredSecretAccessKey)
		tok, _ := rc.Get(CredSessionToken)
		if !okID || !okSecret {
			return awssdk.Credentials{}, fmt.Errorf("%w: request credentials need %s and %s (got keys %v)",
				providers.ErrNoCredentials, CredAccessKeyID, CredSecretAccessKey, rc.Keys())
		}
		return awssdk.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: tok, Source: "request"}, nil
	}
	if p.fileCreds != nil {
		return *p.fileCreds, nil
	}
	id, secret := p.getenv("AWS_ACCESS_KEY_ID"), p.getenv("AWS_SECRET_ACCESS_KEY")
	if id != "" && secret != "" {
		return awssdk.Credentials{AccessKeyID: id, SecretAccessKey: secret,
			SessionToken: p.getenv("AWS_SESSION_TOKEN"), Source: "environment"}, nil
	}
	return awssdk.Credentials{}, fmt.Errorf("%w: give request creds %s and %s, params.credentialsFile, "+
		"or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", providers.ErrNoCredentials, CredAccessKeyID, CredSecretAccessKey)
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
