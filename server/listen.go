package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/toposcope/toposcope/internal/config"
)

// Listen opens the configured listener: TCP on cfg.Listen, with TLS when
// cfg.TLS is set and mutual TLS (every client certificate verified
// against cfg.TLS.ClientCA, expiry included) when ClientCA is set.
func Listen(cfg config.Server) (net.Listener, error) {
	if cfg.TLS.Enabled() { // the certificate is checked before the port is taken
		if _, err := TLSConfig(cfg.TLS); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, config.Errorf("server.listen", "%w", err)
	}
	return WrapListener(cfg, ln)
}

// WrapListener serves TLS on ln when cfg configures it (ln as it is
// otherwise); on an error ln is closed.
func WrapListener(cfg config.Server, ln net.Listener) (net.Listener, error) {
	if !cfg.TLS.Enabled() {
		return ln, nil
	}
	tcfg, err := TLSConfig(cfg.TLS)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	return tls.NewListener(ln, tcfg), nil
}

// TLSConfig builds the server's TLS settings (TLS 1.2 or later).
func TLSConfig(t config.TLS) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
	if err != nil {
		return nil, config.Errorf("server.tls", "load certificate and key: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if t.ClientCA != "" {
		pem, err := os.ReadFile(t.ClientCA)
		if err != nil {
			return nil, config.Errorf("server.tls.clientCA", "%w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, config.Errorf("server.tls.clientCA", "no PEM certificate in %s", t.ClientCA)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// NewHTTPServer returns the http.Server for handler with the configured
// timeouts. Its errors (TLS handshakes refused, ...) go to log.
func NewHTTPServer(cfg config.Server, handler http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.With("component", "http").Handler(), slog.LevelDebug),
	}
}

// Serve serves srv on ln until ctx ends, then shuts down gracefully
// within cfg.ShutdownTimeout (closing what is still open after it).
func Serve(ctx context.Context, cfg config.Server, srv *http.Server, ln net.Listener) error {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = errors.Join(err, srv.Close())
	}
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
