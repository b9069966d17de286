package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/dbtest"
)

// TestMigrate: a new database is refused without migrating when the
// operator says so; Migrate brings it to the schema once (a second run
// does nothing); a schema newer than this toposcope's is refused.
func TestMigrate(t *testing.T) {
	t.Parallel()
	for _, k := range dbtest.Kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			srv := dbtest.Start(t.Context(), t, k)
			ctx := t.Context()
			cfg := store.Database{Driver: srv.Driver(), DSN: srv.DSN(), NoMigrate: true}
			if _, err := store.OpenDatabase(ctx, cfg); !errors.Is(err, store.ErrMigrate) || !strings.Contains(err.Error(), "toposcope store migrate") {
				t.Fatalf("open of an empty database without migrating = %v, want ErrMigrate naming the command", err)
			}
			for i, want := range []store.Migration{{From: 0, To: 1}, {From: 1, To: 1}} {
				m, err := store.Migrate(ctx, cfg)
				if err != nil || m.From != want.From || m.To != want.To || strings.Contains(m.Where, dbtest.Password) {
					t.Fatalf("migrate %d = %+v, %v; want %d to %d", i+1, m, err, want.From, want.To)
				}
			}
			s, err := store.OpenDatabase(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
			table := "toposcope_schema"
			if k == dbtest.MariaDB {
				table = "toposcope.toposcope_schema" // Exec runs as root, in no database
			}
			if err := srv.Exec(ctx, "INSERT INTO "+table+" (version, applied_at) VALUES (99, 'later')"); err != nil {
				t.Fatal(err)
			}
			if _, err := store.OpenDatabase(ctx, cfg); !errors.Is(err, store.ErrSchema) {
				t.Errorf("open of a newer schema = %v, want ErrSchema", err)
			}
		})
	}
}

// TestDatabaseErrorsHidePassword: a refused login and a DSN that does
// not parse are errors that never hold the password.
func TestDatabaseErrorsHidePassword(t *testing.T) {
	t.Parallel()
	for _, k := range dbtest.Kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			srv := dbtest.Start(t.Context(), t, k)
			wrong := strings.Replace(srv.DSN(), dbtest.Password, "wrong-Pa55word", 1)
			broken := strings.Replace(srv.DSN(), "127.0.0.1", "127.0.0.1:x:y", 1)
			for _, dsn := range []string{wrong, broken} {
				_, err := store.OpenDatabase(t.Context(), store.Database{Driver: srv.Driver(), DSN: dsn})
				if err == nil {
					t.Fatalf("open with %s: no error", dsn)
				}
				if strings.Contains(err.Error(), "wrong-Pa55word") || strings.Contains(err.Error(), dbtest.Password) {
					t.Errorf("error holds the password: %v", err)
				}
			}
		})
	}
}
