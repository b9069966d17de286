package slurm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/testenv/slurmtest"
)

// TestPublishRealScontrolReason: the real scontrol, refusing a slurm.conf
// it cannot process, says why in the log (its fatal line), never in the
// returned error.
func TestPublishRealScontrolReason(t *testing.T) {
	slurmtest.Require(t, slurmtest.V2205)
	t.Parallel()
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte("ClusterName=c\nSlurmctldHost=localhost\nNotAKey=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, _, logs := publisher(t, func(c *Config) {
		c.Reconfigure = true
		c.ReconfigureCommand = []string{"/usr/bin/env", "SLURM_CONF=" + conf, "/usr/bin/scontrol", "reconfigure"}
	})
	err := e.Publish(context.Background(), model(t, "small-tree"))
	if !errors.Is(err, ErrReconfigure) {
		t.Fatalf("Publish = %v, want ErrReconfigure", err)
	}
	if strings.Contains(err.Error(), "NotAKey") || strings.Contains(err.Error(), "fatal") {
		t.Errorf("the error quotes scontrol: %v", err)
	}
	for _, w := range []string{"NotAKey", "scontrol: fatal: Unable to process configuration file"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("logs lack %q:\n%s", w, logs)
		}
	}
}
