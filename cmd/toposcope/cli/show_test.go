package cli_test

import (
	"bytes"
	"context"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/cmd/toposcope/cli"
	"github.com/toposcope/toposcope/testenv/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func check(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), []byte(got), *update)
}

// TestShow draws bundled models in a terminal and checks the drawings
// against golden files.
func TestShow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		golden string
		args   []string
	}{
		{"show-default.txt", []string{"show"}},
		{"show-fat-tree-512-depth2.txt", []string{"show", "--model", "fat-tree-512", "--depth", "2"}},
		{"show-fat-tree-512-capped.txt", []string{"show", "--model", "fat-tree-512", "--depth", "0", "--max-children", "2", "--nodes-list"}},
		{"show-mixed-nodes.txt", []string{"show", "--model", "mixed", "--nodes-list", "--max-children", "3"}},
		{"show-nvl72-node.txt", []string{"show", "--model", "nvl72", "--node", "gb100"}},
		{"show-nvl72.dot", []string{"show", "--model", "nvl72", "--format", "dot"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			t.Parallel()
			r := run(t, tt.args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			check(t, tt.golden, r.stdout)
		})
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "--node", "nope"}, `--node "nope"`},
		{[]string{"show", "--format", "svg"}, "--format"},
		{[]string{"show", "--depth", "-1"}, "--depth"},
		{[]string{"show", "--server", "http://127.0.0.1:1", "--model", "nvl72"}, "--model and --server"},
		// --url is trigger's former name of --server, not show's.
		{[]string{"show", "--url", "http://127.0.0.1:1"}, "unknown flag: --url"},
		{[]string{"status", "--url", "http://127.0.0.1:1"}, "unknown flag: --url"},
	} {
		if r := run(t, bad.args...); r.code != cli.ExitUsage || !strings.Contains(r.stderr, bad.want) {
			t.Errorf("%v: exit %d, %q; want %d naming %s", bad.args, r.code, r.stderr, cli.ExitUsage, bad.want)
		}
	}
}

// TestShowServer draws the topology of a running service: the same tree
// as drawn from the service's model directly.
func TestShowServer(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	serveOut := serveInProcess(t, "serve", "--listen", addr, "--store", filepath.Join(t.TempDir(), "s.db"), "--interval", "1h", "--allow-root")
	base := "http://" + addr
	waitRuns(t, base, 1, serveOut)
	remote := run(t, "show", "--server", base, "--nodes-list")
	local := run(t, "show", "--nodes-list")
	if remote.code != 0 || local.code != 0 || remote.stdout != local.stdout || !strings.Contains(remote.stdout, "gpu001") {
		t.Errorf("show --server: exit %d\n%s%s\nshow: exit %d\n%s", remote.code, remote.stdout, remote.stderr, local.code, local.stdout)
	}
	var out, errb bytes.Buffer
	if code := cli.Main(context.Background(), []string{"show", "--server", base + "/nowhere"}, cli.Env{Stdout: &out, Stderr: &errb}); code != 1 ||
		!strings.Contains(errb.String(), "404") {
		t.Errorf("a service path that is not one: exit %d, %q; want 1 naming the status", code, errb.String())
	}
}

// TestProgressQuietWhenNotATerminal: long commands draw progress only on
// a terminal; to a pipe or file they write what they always wrote.
func TestProgressQuietWhenNotATerminal(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"simulate", "--jobs", "3000", "--policies", "bestfit"},
		{"generate", "--model", "nvl72"},
		{"model", "generate", "--nodes", "5000"},
	} {
		r := run(t, args...)
		if r.code != 0 || strings.ContainsAny(r.stderr, "\r\x1b") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}
