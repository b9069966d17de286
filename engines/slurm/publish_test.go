package slurm

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/engines"
)

// publisher builds an engine that writes to a file in a fresh directory.
func publisher(t *testing.T, edit func(*Config)) (*Engine, string, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	var logs bytes.Buffer
	cfg := DefaultConfig()
	cfg.Output = filepath.Join(dir, "topology.conf")
	if edit != nil {
		edit(&cfg)
	}
	e, err := New(cfg, engines.Deps{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	return e, cfg.Output, &logs
}

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestPublishStdout(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	e, err := New(DefaultConfig(), engines.Deps{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	g := model(t, "small-tree")
	if err := e.Publish(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	want, _ := e.Render(context.Background(), g)
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("stdout = %q, want %q", out.Bytes(), want)
	}
}

func TestPublishFile(t *testing.T) {
	t.Parallel()
	e, path, logs := publisher(t, nil)
	ctx := context.Background()
	g := model(t, "small-tree")
	if err := e.Publish(ctx, g); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := e.Render(ctx, g)
	if !bytes.Equal(got, want) {
		t.Fatalf("file = %q, want %q", got, want)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want 0644", fi.Mode().Perm())
	}
	// Identical content is not rewritten: the file keeps its old mtime and inode.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if err := e.Publish(ctx, model(t, "small-tree")); err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(path)
	if !fi2.ModTime().Equal(old) || !os.SameFile(fi, fi2) {
		t.Errorf("identical content was rewritten (mtime %v, want %v)", fi2.ModTime(), old)
	}
	if !strings.Contains(logs.String(), "topology file unchanged") {
		t.Errorf("no 'unchanged' log:\n%s", logs)
	}
	// New content replaces the file.
	if err := e.Publish(ctx, model(t, "fat-tree-512")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Contains(got, []byte("SwitchName=core Switches=spine[1-4]")) {
		t.Errorf("file not replaced:\n%s", got)
	}
	if names := dirEntries(t, filepath.Dir(path)); len(names) != 1 {
		t.Errorf("directory holds %v, want only topology.conf", names)
	}
}

func TestPublishFailureLeavesFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(t *testing.T, path string) string // returns the output path to use
		graph   spec
		wantErr error
	}{
		{"render fails", func(t *testing.T, path string) string { return path },
			spec{leaves: map[string]string{"unplaced": "n1"}, loose: "n2"}, engines.ErrInexpressible},
		{"target is a directory", func(t *testing.T, path string) string {
			d := filepath.Join(filepath.Dir(path), "sub")
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			return d
		}, spec{leaves: map[string]string{"l": "n1"}}, ErrWrite},
		{"directory missing", func(t *testing.T, path string) string {
			return filepath.Join(filepath.Dir(path), "nope", "topology.conf")
		},
			spec{leaves: map[string]string{"l": "n1"}}, ErrWrite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "topology.conf")
			if err := os.WriteFile(path, []byte("SwitchName=old Nodes=n1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(dir, "reconfigured")
			out := tt.setup(t, path)
			cfg := DefaultConfig()
			cfg.Output, cfg.Reconfigure = out, true
			cfg.ReconfigureCommand = []string{"/bin/sh", "-c", "touch " + marker}
			e, err := New(cfg, engines.Deps{})
			if err != nil {
				t.Fatal(err)
			}
			err = e.Publish(context.Background(), build(t, tt.graph))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Publish = %v, want %v", err, tt.wantErr)
			}
			if got, _ := os.ReadFile(path); string(got) != "SwitchName=old Nodes=n1\n" {
				t.Errorf("old file changed to %q", got)
			}
			for _, n := range dirEntries(t, dir) {
				if strings.Contains(n, ".tmp") {
					t.Errorf("temporary file %s left behind", n)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("reconfigure ran after a failed publish")
			}
		})
	}
}

func TestPublishReconfigure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	flag := filepath.Join(dir, "flag")
	// The command fails the first time (printing "boom") and then works.
	script := "echo run >> " + calls + "; if [ -f " + flag + " ]; then exit 0; fi; touch " + flag + "; echo boom; exit 3"
	e, path, _ := publisher(t, func(c *Config) {
		c.Output = filepath.Join(dir, "topology.conf")
		c.Reconfigure = true
		c.ReconfigureCommand = []string{"/bin/sh", "-c", script}
	})
	ctx := context.Background()
	count := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "run")
	}
	err := e.Publish(ctx, model(t, "small-tree"))
	if !errors.Is(err, ErrReconfigure) || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("first Publish = %v, want ErrReconfigure with the command's output", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("file not written before the reconfigure: %v", err)
	}
	// Same content, but the last reconfigure failed: it is retried.
	if err := e.Publish(ctx, model(t, "small-tree")); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if n := count(); n != 2 {
		t.Fatalf("reconfigure ran %d times, want 2", n)
	}
	// Same content, last reconfigure fine: nothing runs.
	if err := e.Publish(ctx, model(t, "small-tree")); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("reconfigure ran for an unchanged file (%d runs)", n)
	}
	// New content: it runs again.
	if err := e.Publish(ctx, model(t, "nvl72")); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 3 {
		t.Fatalf("reconfigure ran %d times, want 3", n)
	}
}

func TestPublishMissingCommand(t *testing.T) {
	t.Parallel()
	e, _, logs := publisher(t, func(c *Config) {
		c.Reconfigure = true
		c.ReconfigureCommand = []string{"/nonexistent/scontrol", "reconfigure"}
	})
	err := e.Publish(context.Background(), model(t, "mixed"))
	if !errors.Is(err, ErrReconfigure) || !strings.Contains(err.Error(), "/nonexistent/scontrol reconfigure") {
		t.Fatalf("Publish = %v", err)
	}
	for _, w := range []string{"nodes with no place in the fabric are under switch unplaced", "count=8", "reconfigure failed"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("logs lack %q:\n%s", w, logs)
		}
	}
}

// TestPublishReconfigureReason: the reason the command gives (the end of
// its standard error, secrets redacted) is in the log, never in the error,
// which may reach an API caller.
func TestPublishReconfigureReason(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "scontrol")
	body := "#!/bin/sh\necho 'scontrol: fatal: Could not establish a configuration source' >&2\necho 'auth token=Zx9Qw8Er7Ty6' >&2\nexit 1\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	e, _, logs := publisher(t, func(c *Config) {
		c.Reconfigure = true
		c.ReconfigureCommand = []string{script, "reconfigure"}
	})
	err := e.Publish(context.Background(), model(t, "small-tree"))
	if !errors.Is(err, ErrReconfigure) {
		t.Fatalf("Publish = %v, want ErrReconfigure", err)
	}
	if strings.Contains(err.Error(), "Could not establish") {
		t.Errorf("the error quotes the command's output: %v", err)
	}
	for _, w := range []string{"reconfigure failed", "Could not establish a configuration source", "token=[redacted]"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("logs lack %q:\n%s", w, logs)
		}
	}
	if strings.Contains(logs.String(), "Zx9Qw8Er7Ty6") {
		t.Errorf("logs show the secret:\n%s", logs)
	}
}
