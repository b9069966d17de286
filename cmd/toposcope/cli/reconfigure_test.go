package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/cmd/toposcope/cli"
)

// fakeScontrol writes an executable script that prints stderr (lines
// ending in a newline) on standard error and exits with code.
func fakeScontrol(t *testing.T, stderr string, code int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scontrol")
	body := "#!/bin/sh\ncat >&2 <<'EOF'\n" + stderr + "EOF\nexit " + strconv.Itoa(code) + "\n"
	if err := os.WriteFile(path, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReconfigureFailureSaysWhy: the operator's CLI shows the end of the
// failed command's standard error, secrets redacted, once.
func TestReconfigureFailureSaysWhy(t *testing.T) {
	t.Parallel()
	scontrol := fakeScontrol(t, "scontrol: error: password=Hunter2Hunter2\nscontrol: fatal: Could not establish a configuration source\n", 1)
	for _, level := range []string{"warn", "debug"} {
		out := filepath.Join(t.TempDir(), "topology.conf")
		r := run(t, "generate", "--log-level", level, "--model", "nvl72", "--output", out, "--reconfigure",
			"--engine-param", "reconfigureCommand="+scontrol+" reconfigure")
		if r.code != cli.ExitFailure {
			t.Fatalf("exit %d, want %d\n%s", r.code, cli.ExitFailure, r.stderr)
		}
		for _, w := range []string{"slurm reconfigure command failed", "the command's standard error ended with:\n  scontrol: error: password=[redacted]\n  scontrol: fatal: Could not establish a configuration source\n"} {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("--log-level %s: stderr lacks %q:\n%s", level, w, r.stderr)
			}
		}
		if strings.Contains(r.stderr, "Hunter2") {
			t.Errorf("--log-level %s: stderr shows the password:\n%s", level, r.stderr)
		}
	}
}
