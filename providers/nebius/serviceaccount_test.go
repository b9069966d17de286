package nebius_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/nebius"
	"github.com/toposcope/toposcope/testenv/cloudsim"
)

// key generates a service account key and its PKCS#8 PEM.
func key(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return k, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// TestServiceAccountExchange: a service account key — from the request
// (Topograph's serviceAccountId, publicKeyId, privateKey) or from a
// credentials file as Nebius's CLI writes it — is exchanged through
// TokenExchangeService/Exchange (a real grpc-go call to the emulator, which
// checks the RS256 JWT) for the IAM token List needs; the token is cached;
// a key the service does not know is refused as an auth failure without
// showing the key.
func TestServiceAccountExchange(t *testing.T) {
	t.Parallel()
	const sa, kid = "serviceaccount-e00toposcope", "publickey-e00toposcope"
	k, pemKey := key(t)
	_, otherPEM := key(t)
	credsFile := filepath.Join(t.TempDir(), "credentials.json")
	data, _ := json.Marshal(map[string]any{"subject-credentials": map[string]string{"alg": "RS256", "private-key": pemKey, "kid": kid, "iss": sa, "sub": sa}})
	if err := os.WriteFile(credsFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	want := model(t, "small-tree")
	tests := []struct {
		name    string
		creds   map[string]string
		file    bool
		wantErr error
	}{
		{name: "request key", creds: map[string]string{nebius.CredServiceAccountID: sa, nebius.CredPublicKeyID: kid, nebius.CredPrivateKey: pemKey}},
		{name: "credentials file", file: true},
		{name: "unknown key", creds: map[string]string{nebius.CredServiceAccountID: sa, nebius.CredPublicKeyID: kid, nebius.CredPrivateKey: otherPEM}, wantErr: providers.ErrAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			emu, url := start(t, want, cloudsim.Faults{})
			emu.Keys = map[string]cloudsim.ServiceAccountKey{kid: {ServiceAccountID: sa, Key: &k.PublicKey}}
			p := newProvider(t, url, nil, func(c *nebius.Config) {
				c.Token, c.TokenURL = "", url
				if tt.file {
					c.CredentialsFile = credsFile
				}
			})
			var req providers.Request
			if tt.creds != nil {
				req.Credentials = providers.NewCredentials(tt.creds)
			}
			for range 2 {
				g, err := p.Discover(context.Background(), req)
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) || strings.Contains(err.Error(), "PRIVATE KEY") {
						t.Fatalf("err = %v, want %v without the key", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(g.Nodes()) != len(want.Nodes()) {
					t.Fatalf("%d nodes", len(g.Nodes()))
				}
			}
			if emu.Exchanges() != 1 {
				t.Errorf("%d exchanges for two discoveries, want 1 (the token is cached)", emu.Exchanges())
			}
		})
	}
}

func TestCredentialsFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"subject-credentials":{"alg":"HS256","kid":"k","iss":"a","sub":"a","private-key":"x"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := nebius.DefaultConfig()
	cfg.Project, cfg.CredentialsFile, cfg.MetadataURL = "p", bad, "-"
	if _, err := nebius.New(cfg, providers.Deps{}); err == nil || !strings.Contains(err.Error(), "credentialsFile") || !strings.Contains(err.Error(), "RS256") {
		t.Fatalf("err = %v", err)
	}
}

// TestCachedTokenNeedsTheKey: a cached token is only ever handed to the
// caller that holds the same private key. After a discovery with the
// service account's real key, a request that names the same service
// account and key ID but brings another private key is not served the
// cached token: its own JWT goes to the exchange, which refuses it.
func TestCachedTokenNeedsTheKey(t *testing.T) {
	t.Parallel()
	const sa, kid = "serviceaccount-e00toposcope", "publickey-e00toposcope"
	k, pemKey := key(t)
	_, otherPEM := key(t)
	want := model(t, "small-tree")
	emu, url := start(t, want, cloudsim.Faults{})
	emu.Keys = map[string]cloudsim.ServiceAccountKey{kid: {ServiceAccountID: sa, Key: &k.PublicKey}}
	p := newProvider(t, url, nil, func(c *nebius.Config) { c.Token, c.TokenURL = "", url })
	creds := func(pem string) providers.Request {
		return providers.Request{Credentials: providers.NewCredentials(map[string]string{
			nebius.CredServiceAccountID: sa, nebius.CredPublicKeyID: kid, nebius.CredPrivateKey: pem})}
	}
	if _, err := p.Discover(context.Background(), creds(pemKey)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Discover(context.Background(), creds(otherPEM)); !errors.Is(err, providers.ErrAuth) {
		t.Fatalf("another key for the same service account: err = %v; want providers.ErrAuth", err)
	}
	if emu.Exchanges() != 1 {
		t.Errorf("%d tokens handed out, want 1: the other key's JWT is refused by the exchange", emu.Exchanges())
	}
}
