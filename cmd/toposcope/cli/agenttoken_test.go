package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/server"
)

// TestAgentToken: `agent token` prints, per node of a hostlist, the token
// the service accepts for that node alone (server.AgentToken), the same
// as the documented openssl recipe; it refuses a short secret, a bad node
// name and no node, and never prints the secret.
func TestAgentToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := "s3cret-of-at-least-32-characters-for-agents"
	secretFile, short := filepath.Join(dir, "secret"), filepath.Join(dir, "short")
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(short, []byte("too-short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "agent", "token", "--secret-file", secretFile, "gpu[001-002]", "cpu01")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, got %q", r.stdout)
	}
	for i, node := range []string{"gpu001", "gpu002", "cpu01"} {
		want := node + " " + server.AgentToken([]byte(secret), node)
		if lines[i] != want {
			t.Errorf("line %d: %q, want %q", i, lines[i], want)
		}
	}
	openssl, err := exec.Command("sh", "-c", `printf 'toposcope-agent:%s' gpu001 | openssl dgst -sha256 -hmac "$(cat "$1")" -r | cut -d' ' -f1`, "sh", secretFile).Output()
	if err != nil {
		t.Fatalf("openssl: %v", err)
	}
	if got := strings.Fields(lines[0])[1]; got != strings.TrimSpace(string(openssl)) {
		t.Errorf("token %s differs from the documented openssl recipe's %s", got, openssl)
	}
	if strings.Contains(r.stdout+r.stderr, secret) {
		t.Error("the secret was printed")
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"short-secret", []string{"--secret-file", short, "gpu001"}, "shorter than 32"},
		{"bad-node", []string{"--secret-file", secretFile, "gpu!001"}, "gpu!001"},
		{"no-node", []string{"--secret-file", secretFile}, "at least one node"},
		{"no-secret", []string{"gpu001"}, "--secret-file"},
	} {
		r := run(t, append([]string{"agent", "token"}, tc.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "too-short") {
			t.Errorf("%s: exit %d, stderr %q; want a failure naming %q without the secret", tc.name, r.code, r.stderr, tc.want)
		}
	}
}
