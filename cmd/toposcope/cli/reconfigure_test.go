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

// TestReconfigureAnnounce: generate --reconfigure announces the command
// that runs (as configured, not the default) when the file changes, and
// nothing when it does not (then nothing runs).
func TestReconfigureAnnounce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	script := filepath.Join(dir, "reconf")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho run >> "+calls+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "topology.conf")
	args := []string{"generate", "--model", "nvl72", "--output", out, "--reconfigure", "--engine-param", "reconfigureCommand=" + script + " now"}
	runs := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "run")
	}
	steps := []struct {
		name     string
		model    string
		announce string // "" for no announcement
		runs     int
	}{
		{"new file", "nvl72", "toposcope: creating " + out + ", then running `" + script + " now`\n", 1},
		{"unchanged", "nvl72", "", 1},
		{"changed", "small-tree", "toposcope: replacing " + out + " (", 2},
	}
	for _, s := range steps {
		args[2] = s.model
		r := run(t, args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", s.name, r.code, r.stderr)
		}
		if s.announce == "" && strings.Contains(r.stderr, "running") || !strings.Contains(r.stderr, s.announce) {
			t.Errorf("%s: stderr %q, want %q", s.name, r.stderr, s.announce)
		}
		if strings.Contains(r.stderr, "scontrol") {
			t.Errorf("%s: announces the default command:\n%s", s.name, r.stderr)
		}
		if n := runs(); n != s.runs {
			t.Errorf("%s: the command ran %d times in all, want %d", s.name, n, s.runs)
		}
	}
	args[2] = "nvl72"
	if r := run(t, args...); !strings.Contains(r.stderr, "then running `"+script+" now`\n") {
		t.Errorf("replacing: stderr %q does not name the command", r.stderr)
	}
}
