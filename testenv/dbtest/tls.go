package dbtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// tlsFiles are a test CA and a server certificate for 127.0.0.1 and
// localhost that it signed.
type tlsFiles struct {
	ca, cert, key string
}

// writeTLS makes a CA and a server certificate in dir, the key readable
// by the server's user only.
func (s *Server) writeTLS(dir string) (tlsFiles, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tlsFiles{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dbtest CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return tlsFiles{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return tlsFiles{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tlsFiles{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(24 * time.Hour), DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tlsFiles{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return tlsFiles{}, err
	}
	f := tlsFiles{ca: filepath.Join(dir, "ca.pem"), cert: filepath.Join(dir, "server.pem"), key: filepath.Join(dir, "server.key")}
	for _, w := range []struct {
		path, kind string
		der        []byte
		mode       os.FileMode
	}{{f.ca, "CERTIFICATE", caDER, 0o644}, {f.cert, "CERTIFICATE", der, 0o644}, {f.key, "PRIVATE KEY", keyDER, 0o600}} {
		if err := os.WriteFile(w.path, pem.EncodeToMemory(&pem.Block{Type: w.kind, Bytes: w.der}), w.mode); err != nil {
			return tlsFiles{}, fmt.Errorf("dbtest: %w", err)
		}
		if s.cred != nil {
			if err := os.Chown(w.path, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
				return tlsFiles{}, fmt.Errorf("dbtest: %w", err)
			}
		}
	}
	return f, nil
}

// CAFile is the CA that signed a TLS server's certificate ("" without
// TLS).
func (s *Server) CAFile() string { return s.tls.ca }
