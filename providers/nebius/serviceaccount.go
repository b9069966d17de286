package nebius

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/toposcope/toposcope/providers"
)

// Request credential keys of a service account (Topograph's names).
const (
	CredServiceAccountID = "serviceAccountId"
	CredPublicKeyID      = "publicKeyId"
	CredPrivateKey       = "privateKey"
)

// ExchangeMethod is the gRPC method that trades a service account's
// signed JWT for an IAM access token.
const ExchangeMethod = "/nebius.iam.v1.TokenExchangeService/Exchange"

// DefaultTokenURL is the public token exchange endpoint.
const DefaultTokenURL = "https://tokens.iam.api.nebius.cloud:443"

// jwtAudience is the audience of the exchanged JWT.
const jwtAudience = "token-service.iam.new.nebiuscloud.net"

// serviceAccount is a service account key: its ID, its public key's ID
// and the private key that signs.
type serviceAccount struct {
	id, keyID string
	key       *rsa.PrivateKey
}

// parsePrivateKey reads a PEM PKCS#1 or PKCS#8 RSA key.
func parsePrivateKey(pemText string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("private key: no PEM block")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("private key: neither PKCS#1 nor PKCS#8")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("private key: not RSA")
	}
	return rk, nil
}

// readCredentialsFile reads a service account credentials file
// ({"subject-credentials": {"alg": "RS256", "private-key", "kid", "iss",
// "sub"}}, as Nebius's CLI writes it).
func readCredentialsFile(path string) (*serviceAccount, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Subject struct {
			Alg        string `json:"alg"`
			PrivateKey string `json:"private-key"`
			KeyID      string `json:"kid"`
			Issuer     string `json:"iss"`
			Subject    string `json:"sub"`
		} `json:"subject-credentials"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a service account credentials file: %w", err)
	}
	s := f.Subject
	switch {
	case s.Alg != "RS256":
		return nil, fmt.Errorf("alg %q: only RS256 is supported", s.Alg)
	case s.Subject == "" || s.Issuer != s.Subject:
		return nil, errors.New("sub must be the service account ID and iss the same")
	case s.KeyID == "":
		return nil, errors.New("kid (the public key ID) is missing")
	}
	key, err := parsePrivateKey(s.PrivateKey)
	if err != nil {
		return nil, err
	}
	return &serviceAccount{id: s.Subject, keyID: s.KeyID, key: key}, nil
}

// fromCredentials reads a service account from request credentials; nil
// when they hold none.
func fromCredentials(c providers.Credentials) (*serviceAccount, error) {
	id, okID := c.Get(CredServiceAccountID)
	kid, okKID := c.Get(CredPublicKeyID)
	pk, okPK := c.Get(CredPrivateKey)
	if !okID && !okKID && !okPK {
		return nil, nil
	}
	if !okID || !okKID || !okPK {
		return nil, fmt.Errorf("%w: a service account needs %s, %s and %s", providers.ErrNoCredentials, CredServiceAccountID, CredPublicKeyID, CredPrivateKey)
	}
	key, err := parsePrivateKey(pk)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", providers.ErrNoCredentials, CredPrivateKey, err)
	}
	return &serviceAccount{id: id, keyID: kid, key: key}, nil
}

// signedJWT is the short-lived RS256 JWT the exchange takes: kid in the
// header, iss and sub the service account, the token service as audience.
func (s *serviceAccount) signedJWT(now time.Time) (string, error) {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": s.keyID})
	claims, _ := json.Marshal(map[string]any{"iss": s.id, "sub": s.id, "aud": []string{jwtAudience},
		"iat": now.Unix(), "exp": now.Add(time.Minute).Unix()})
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign JWT: %w", err)
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

// exchangeRequest is ExchangeTokenRequest (nebius/iam/v1/token_service.proto:
// grant_type 1, requested_token_type 2, subject_token 3,
// subject_token_type 4).
type exchangeRequest struct{ subjectToken string }

func (r *exchangeRequest) marshal() []byte {
	var b []byte
	for _, f := range []struct {
		num protowire.Number
		v   string
	}{
		{1, "urn:ietf:params:oauth:grant-type:token-exchange"},
		{2, "urn:ietf:params:oauth:token-type:access_token"},
		{3, r.subjectToken},
		{4, "urn:ietf:params:oauth:token-type:jwt"},
	} {
		b = protowire.AppendTag(b, f.num, protowire.BytesType)
		b = protowire.AppendString(b, f.v)
	}
	return b
}

// exchangeResponse is CreateTokenResponse (access_token 1, token_type 3,
// expires_in 4).
type exchangeResponse struct {
	accessToken, tokenType string
	expiresIn              int64
}

func (r *exchangeResponse) unmarshal(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, data []byte, v uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			r.accessToken = string(data)
		case num == 3 && typ == protowire.BytesType:
			r.tokenType = string(data)
		case num == 4 && typ == protowire.VarintType:
			r.expiresIn = int64(v)
		}
		return nil
	})
}

// exchanger trades a service account's JWT for an IAM token and keeps
// the token until a minute before it expires.
type exchanger struct {
	client *grpcClient
	now    func() time.Time

	mu sync.Mutex
	// cached is keyed by service account, key ID and the private key's
	// fingerprint: a token goes only to a caller holding the key that
	// earned it, never to one that merely names the same account.
	cached map[string]cachedToken
}

type cachedToken struct {
	token   string
	expires time.Time
}

// token returns an IAM token for s.
func (x *exchanger) token(ctx context.Context, s *serviceAccount) (string, error) {
	fp := sha256.Sum256(x509.MarshalPKCS1PublicKey(&s.key.PublicKey))
	key := s.id + "/" + s.keyID + "/" + string(fp[:])
	now := x.now()
	x.mu.Lock()
	if c, ok := x.cached[key]; ok && now.Before(c.expires) {
		x.mu.Unlock()
		return c.token, nil
	}
	x.mu.Unlock()
	jwt, err := s.signedJWT(now)
	if err != nil {
		return "", err
	}
	sess, err := x.client.open()
	if err != nil {
		return "", err
	}
	defer func() { _ = sess.Close() }()
	var resp exchangeResponse
	if err := sess.invoke(ctx, ExchangeMethod, &exchangeRequest{subjectToken: jwt}, &resp); err != nil {
		return "", fmt.Errorf("token exchange for service account %s: %w", s.id, classifyErr(err))
	}
	if !strings.EqualFold(resp.tokenType, "bearer") || resp.accessToken == "" {
		return "", fmt.Errorf("token exchange for service account %s: got a %q token", s.id, resp.tokenType)
	}
	x.mu.Lock()
	if x.cached == nil {
		x.cached = map[string]cachedToken{}
	}
	x.cached[key] = cachedToken{token: resp.accessToken, expires: now.Add(time.Duration(resp.expiresIn)*time.Second - time.Minute)}
	x.mu.Unlock()
	return resp.accessToken, nil
}
