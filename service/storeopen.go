package service

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/service/store"
)

// OpenStore opens the store the configuration names: the shared
// database of store.database, or else the bbolt file of store.path.
func OpenStore(ctx context.Context, cfg config.Store) (*store.Store, error) {
	if !cfg.Database.Enabled() {
		return store.Open(cfg.Path, store.Options{LockTimeout: cfg.LockTimeout})
	}
	db, err := DatabaseOf(cfg.Database)
	if err != nil {
		return nil, err
	}
	return store.OpenDatabase(ctx, db)
}

// DatabaseOf reads the DSN and the TLS files that store.database names.
// An error names the key, never the DSN.
func DatabaseOf(c config.Database) (store.Database, error) {
	db := store.Database{Driver: c.Driver, MaxConns: c.MaxConns, OpTimeout: c.OpTimeout, NoMigrate: c.Migrate == "never"}
	switch {
	case c.DSNFile != "":
		data, err := os.ReadFile(c.DSNFile)
		if err != nil {
			return db, &config.FieldError{Field: "store.database.dsnFile", Err: err}
		}
		db.DSN = strings.TrimSpace(string(data))
	case c.DSNEnv != "":
		db.DSN = strings.TrimSpace(os.Getenv(c.DSNEnv))
	}
	if db.DSN == "" {
		return db, config.Errorf("store.database."+dsnKey(c), "gives an empty data source name")
	}
	if c.TLS.CAFile == "" {
		return db, nil
	}
	pem, err := os.ReadFile(c.TLS.CAFile)
	if err != nil {
		return db, &config.FieldError{Field: "store.database.tls.caFile", Err: err}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return db, config.Errorf("store.database.tls.caFile", "holds no PEM certificate")
	}
	db.TLS = &tls.Config{RootCAs: pool, ServerName: c.TLS.ServerName, MinVersion: tls.VersionTLS12}
	if c.TLS.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.TLS.CertFile, c.TLS.KeyFile)
		if err != nil {
			return db, &config.FieldError{Field: "store.database.tls.certFile", Err: err}
		}
		db.TLS.Certificates = []tls.Certificate{cert}
	}
	return db, nil
}

func dsnKey(c config.Database) string {
	if c.DSNFile != "" {
		return "dsnFile"
	}
	return "dsnEnv"
}
