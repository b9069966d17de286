package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/dbtest"
)

// TestStoreCommands: `store migrate` brings a new PostgreSQL database to
// the schema once; `store copy` moves a bbolt history into it and back
// out into a new file, refuses a destination with a history, and a
// malformed STORE is a usage error; the password is never printed.
func TestStoreCommands(t *testing.T) {
	t.Parallel()
	db := dbtest.Start(t.Context(), t, dbtest.Postgres)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "dsn")
	if err := os.WriteFile(dsn, []byte(db.DSN()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	yaml := "provider:\n  name: sim\n  params:\n    model: nvl72\nstore:\n  database:\n    driver: postgres\n    dsnFile: " + dsn + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "from.db")
	s, err := store.Open(src, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"nodes": []any{}})
	if err := s.AddSnapshot(t.Context(), &store.Snapshot{Status: store.StatusAccepted, Provider: "sim"}, data, nil, &store.Run{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{"store", "migrate", "--config", cfg}, 0, "schema version 0 → 1"},
		{[]string{"store", "migrate", "--config", cfg}, 0, "nothing to do"},
		{[]string{"store", "copy", "--from", "bolt:" + src, "--to", "config", "--config", cfg}, 0, "(1 snapshots) from " + src + " to postgres://toposcope@"},
		{[]string{"store", "copy", "--from", "bolt:" + src, "--to", "postgres:file:" + dsn}, 1, ""},
		{[]string{"store", "copy", "--from", "postgres:file:" + dsn, "--to", "bolt:" + filepath.Join(dir, "back.db")}, 0, "(1 snapshots)"},
		{[]string{"store", "copy", "--from", "sqlite:x", "--to", "bolt:" + filepath.Join(dir, "x.db")}, 2, ""},
		{[]string{"store", "copy", "--from", "config", "--to", "bolt:" + filepath.Join(dir, "y.db")}, 2, ""},
	}
	for _, st := range steps {
		r := run(t, st.args...)
		if r.code != st.code || !strings.Contains(r.stdout, st.stdout) {
			t.Errorf("toposcope %s: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q", strings.Join(st.args, " "), r.code, r.stdout, r.stderr, st.code, st.stdout)
		}
		if strings.Contains(r.stdout+r.stderr, dbtest.Password) {
			t.Errorf("toposcope %s printed the password", strings.Join(st.args, " "))
		}
	}
}
