package service_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/dbtest"
)

// TestDatabaseTLS: against PostgreSQL and MariaDB servers that take only
// TLS connections, store.database.tls.caFile makes the connection TLS and
// verifies the server (the store opens and writes); without it the
// server refuses the login, and with another CA the certificate is
// refused.
func TestDatabaseTLS(t *testing.T) {
	t.Parallel()
	servers := map[dbtest.Kind]*dbtest.Server{}
	for _, k := range dbtest.Kinds {
		servers[k] = dbtest.StartWith(t.Context(), t, k, dbtest.Options{TLS: true})
	}
	for _, k := range dbtest.Kinds {
		srv := servers[k]
		other := servers[dbtest.Postgres]
		if k == dbtest.Postgres {
			other = servers[dbtest.MariaDB]
		}
		dsn := filepath.Join(t.TempDir(), "dsn")
		if err := os.WriteFile(dsn, []byte(srv.DSN()), 0o600); err != nil {
			t.Fatal(err)
		}
		refused := "no encryption" // pg_hba.conf has only hostssl
		if k == dbtest.MariaDB {
			refused = "Access denied" // the user is REQUIRE SSL
		}
		for _, tc := range []struct {
			name, ca, fails string
		}{
			{"verified", srv.CAFile(), ""},
			{"no TLS", "", refused},
			{"another CA", other.CAFile(), "certificate"},
		} {
			t.Run(string(k)+"/"+tc.name, func(t *testing.T) {
				c := config.DefaultDatabase()
				c.Driver, c.DSNFile, c.TLS.CAFile = srv.Driver(), dsn, tc.ca
				db, err := service.DatabaseOf(c)
				if err != nil {
					t.Fatal(err)
				}
				s, err := store.OpenDatabase(t.Context(), db)
				if tc.fails != "" {
					if err == nil || !strings.Contains(err.Error(), tc.fails) || strings.Contains(err.Error(), dbtest.Password) {
						t.Fatalf("open = %v, want an error about %q without the password", err, tc.fails)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = s.Close() }()
				if err := s.AddSnapshot(t.Context(), &store.Snapshot{Status: store.StatusAccepted}, []byte(`{}`), nil, nil); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
