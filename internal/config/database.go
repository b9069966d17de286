package config

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Database keeps the store in a PostgreSQL or MariaDB database that
// several replicas share, instead of the bbolt file (the
// `store.database` section). The DSN, which holds the password, comes
// from a file or an environment variable, never from the configuration
// file itself nor from a request.
type Database struct {
	// Driver is "postgres" (PostgreSQL) or "mysql" (MariaDB, MySQL);
	// empty keeps the store in the bbolt file of store.path.
	Driver string `yaml:"driver"`
	// DSNFile is a file holding the data source name (a Kubernetes
	// Secret's key, mounted): a postgres:// URL or a MySQL DSN
	// (user:password@tcp(host:3306)/toposcope).
	DSNFile string `yaml:"dsnFile"`
	// DSNEnv is the environment variable holding the data source name,
	// in place of dsnFile.
	DSNEnv string `yaml:"dsnEnv"`
	// TLS, when caFile is set, verifies the database's certificate
	// against it (and presents certFile/keyFile when set), whatever the
	// DSN says of TLS.
	TLS DatabaseTLS `yaml:"tls"`
	// MaxConns bounds each replica's open connections (default 10).
	MaxConns int `yaml:"maxConns"`
	// OpTimeout bounds each store operation, retries included (default
	// 10s): past it, a request gets 503 with Retry-After.
	OpTimeout time.Duration `yaml:"opTimeout"`
	// RefreshInterval is how often a replica reads the store's heads
	// again to see another replica's discovery or accept, and how often
	// the leader checks (and a follower tries) the leader's lock in the
	// database when there is no Kubernetes Lease (default 2s). The
	// budgets and the ledger are checked at every read instead.
	RefreshInterval time.Duration `yaml:"refreshInterval"`
	// Migrate is "auto" (default: a replica brings the schema up to its
	// version at start, under a lock in the database) or "never" (the
	// operator runs `toposcope store migrate`; a replica refuses an older
	// schema).
	Migrate string `yaml:"migrate"`
}

// DatabaseTLS is the TLS of the connection to the database.
type DatabaseTLS struct {
	// CAFile is the PEM bundle that signs the database's certificate.
	CAFile string `yaml:"caFile"`
	// CertFile and KeyFile are this replica's client certificate and key.
	CertFile string `yaml:"certFile"`
	KeyFile  string `yaml:"keyFile"`
	// ServerName is the name checked in the database's certificate
	// (default: the DSN's host).
	ServerName string `yaml:"serverName"`
}

// databaseDrivers are the values store.database.driver takes.
var databaseDrivers = []string{"postgres", "mysql"}

// DefaultDatabase returns the database defaults (no database: the
// store is the bbolt file).
func DefaultDatabase() Database {
	return Database{MaxConns: 10, OpTimeout: 10 * time.Second, RefreshInterval: 2 * time.Second, Migrate: "auto"}
}

// Enabled reports whether the store is in a database.
func (d *Database) Enabled() bool { return d.Driver != "" }

// Validate reports every invalid key of the section.
func (d *Database) Validate() error {
	var errs []error
	if d.Driver == "" {
		if d.DSNFile != "" || d.DSNEnv != "" || d.TLS != (DatabaseTLS{}) {
			errs = append(errs, Errorf("driver", "is required when dsnFile, dsnEnv or tls is set (postgres or mysql)"))
		}
		return errors.Join(errs...)
	}
	if !slices.Contains(databaseDrivers, d.Driver) {
		errs = append(errs, Errorf("driver", "must be postgres or mysql, got %q", d.Driver))
	}
	switch {
	case d.DSNFile == "" && d.DSNEnv == "":
		errs = append(errs, Errorf("dsnFile", "or dsnEnv is required: the data source name, with its password, is read from a file or an environment variable"))
	case d.DSNFile != "" && d.DSNEnv != "":
		errs = append(errs, Errorf("dsnEnv", "must not be set with dsnFile; give one"))
	}
	if (d.TLS.CertFile == "") != (d.TLS.KeyFile == "") {
		errs = append(errs, Errorf("tls.keyFile", "and tls.certFile go together"))
	}
	if d.TLS.CertFile != "" && d.TLS.CAFile == "" {
		errs = append(errs, Errorf("tls.caFile", "is required with a client certificate"))
	}
	if d.MaxConns < 1 {
		errs = append(errs, Errorf("maxConns", "must be at least 1, got %d", d.MaxConns))
	}
	if d.OpTimeout <= 0 {
		errs = append(errs, Errorf("opTimeout", "must be a positive duration, got %s", d.OpTimeout))
	}
	if d.RefreshInterval <= 0 {
		errs = append(errs, Errorf("refreshInterval", "must be a positive duration, got %s", d.RefreshInterval))
	}
	if d.Migrate != "auto" && d.Migrate != "never" {
		errs = append(errs, Errorf("migrate", "must be auto or never, got %q", d.Migrate))
	}
	return errors.Join(errs...)
}

// String describes the section without its secrets.
func (d *Database) String() string {
	src := "file " + d.DSNFile
	if d.DSNEnv != "" {
		src = "$" + d.DSNEnv
	}
	return fmt.Sprintf("%s (DSN from %s)", d.Driver, src)
}
