package charts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/testenv/helmtest"
)

// TestSharedDatabase: with database.driver and its Secret, any
// replicaCount renders; the configuration names the driver and the
// mounted DSN file (from the Secret's key, read-only), followers need no
// peer token, and the notes say where the store is. Without it the
// notes warn that the emptyDir store is lost with the pod.
func TestSharedDatabase(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)
	args := []string{"--set", "replicaCount=3", "--set", "database.driver=postgres", "--set", "database.existingSecret=toposcope-db",
		"--set", "database.dsnKey=uri", "--set", "auth.existingSecret=toposcope-tokens"}
	out, err := render(t, h, args...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := renderedConfig(t, out)
	for _, want := range []string{"driver: postgres", "dsnFile: /etc/toposcope/database/dsn", "leaderElection:"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("rendered config lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Contains(cfg, "peerTokenFile") {
		t.Errorf("followers on a database read no peer token:\n%s", cfg)
	}
	objs := renderObjects(t, h, args...)
	dep := mustKind(t, objs, "Deployment", "serve")
	eq(t, "replicas", at(dep.Object, "spec", "replicas"), int64(3))
	eq(t, "strategy", at(dep.Object, "spec", "strategy", "type"), "RollingUpdate")
	var found bool
	for _, item := range podSpec(dep)["volumes"].([]any) {
		v, _ := item.(map[string]any)
		if v["name"] == "database" {
			found = true
			eq(t, "secret", at(v, "secret", "secretName"), "toposcope-db")
			eq(t, "secret key", at(v, "secret", "items", 0, "key"), "uri")
			eq(t, "secret path", at(v, "secret", "items", 0, "path"), "dsn")
		}
	}
	if !found {
		t.Error("no database volume")
	}
	notes := func(args ...string) string {
		t.Helper()
		out, err := h.Run(context.Background(), append([]string{"install", "toposcope", chartDir, "--namespace", "toposcope", "--dry-run=client"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if n := notes(args...); !strings.Contains(n, "The store is in the postgres database of Secret toposcope-db") {
		t.Errorf("notes with a database:\n%s", n)
	}
	if n := notes(); !strings.Contains(n, "WARNING: the store is in an emptyDir") {
		t.Errorf("notes of the defaults lack the emptyDir warning:\n%s", n)
	}
	if n := notes("--set", "persistence.enabled=true"); strings.Contains(n, "WARNING: the store") {
		t.Errorf("notes with persistence warn:\n%s", n)
	}
}
