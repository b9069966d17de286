package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/server"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a leaf certificate valid from notBefore to notAfter.
func (ca *testCA) issue(t *testing.T, cn string, server bool, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn}, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serveTLS starts the real listener and http.Server on a free loopback
// port and returns the base URL.
func serveTLS(t *testing.T, h http.Handler, tlsCfg config.TLS) string {
	t.Helper()
	cfg := config.DefaultServer()
	cfg.Listen = "127.0.0.1:0"
	cfg.TLS = tlsCfg
	ln, err := server.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- server.Serve(ctx, cfg, server.NewHTTPServer(cfg, h, slog.New(slog.DiscardHandler)), ln)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "https://" + ln.Addr().String()
}

func client(t *testing.T, ca *testCA, certPEM, keyPEM []byte) *http.Client {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.pem)
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if certPEM != nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		// Always present the certificate, even one the server's CA list
		// does not name, so that the server's verification is what refuses.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 30 * time.Second}
}

func get(c *http.Client, url string) (int, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	dir := t.TempDir()
	ca, other := newCA(t, "toposcope test CA"), newCA(t, "some other CA")
	now := time.Now()
	srvCert, srvKey := ca.issue(t, "toposcope", true, now.Add(-time.Hour), now.Add(time.Hour))
	url := serveTLS(t, s.handler, config.TLS{
		Cert: writeFile(t, dir, "server.pem", srvCert), Key: writeFile(t, dir, "server.key", srvKey),
		ClientCA: writeFile(t, dir, "ca.pem", ca.pem),
	})
	goodCert, goodKey := ca.issue(t, "good client", false, now.Add(-time.Hour), now.Add(time.Hour))
	oldCert, oldKey := ca.issue(t, "expired client", false, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	foreignCert, foreignKey := other.issue(t, "foreign client", false, now.Add(-time.Hour), now.Add(time.Hour))
	tests := []struct {
		name      string
		cert, key []byte
		ok        bool
		want      string
	}{
		{"valid client certificate", goodCert, goodKey, true, ""},
		{"no client certificate", nil, nil, false, "certificate required"},
		{"expired client certificate", oldCert, oldKey, false, "expired certificate"},
		{"certificate from another CA", foreignCert, foreignKey, false, "unknown certificate authority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, err := get(client(t, ca, tt.cert, tt.key), url+"/healthz")
			if tt.ok && (err != nil || code != http.StatusOK) {
				t.Fatalf("got %d, %v", code, err)
			}
			if !tt.ok && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("got %d, %v; want a refusal: %s", code, err, tt.want)
			}
		})
	}
	t.Run("still serving after refusals", func(t *testing.T) {
		t.Parallel()
		for range 3 {
			_, _ = get(client(t, ca, oldCert, oldKey), url+"/healthz")
		}
		if code, err := get(client(t, ca, goodCert, goodKey), url+"/healthz"); err != nil || code != http.StatusOK {
			t.Fatalf("got %d, %v", code, err)
		}
	})
}

func TestTLSWithoutClientCA(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	dir := t.TempDir()
	ca := newCA(t, "ca")
	now := time.Now()
	srvCert, srvKey := ca.issue(t, "toposcope", true, now.Add(-time.Hour), now.Add(time.Hour))
	url := serveTLS(t, s.handler, config.TLS{Cert: writeFile(t, dir, "s.pem", srvCert), Key: writeFile(t, dir, "s.key", srvKey)})
	if code, err := get(client(t, ca, nil, nil), url+"/healthz"); err != nil || code != http.StatusOK {
		t.Fatalf("got %d, %v", code, err)
	}
	if _, err := get(client(t, newCA(t, "untrusted"), nil, nil), url+"/healthz"); err == nil {
		t.Error("a client that does not trust the server's CA connected")
	}
}

func TestTLSConfigErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := server.TLSConfig(config.TLS{Cert: filepath.Join(dir, "none.pem"), Key: filepath.Join(dir, "none.key")})
	if err == nil || !strings.Contains(err.Error(), "server.tls") {
		t.Errorf("missing files: %v", err)
	}
	ca := newCA(t, "ca")
	c, k := ca.issue(t, "s", true, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	_, err = server.TLSConfig(config.TLS{Cert: writeFile(t, dir, "c", c), Key: writeFile(t, dir, "k", k), ClientCA: writeFile(t, dir, "bad", []byte("nope"))})
	if err == nil || !strings.Contains(err.Error(), "server.tls.clientCA") {
		t.Errorf("bad client CA: %v", err)
	}
}
