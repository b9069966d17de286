// Package releasebin gives tests the release binaries (`make build`:
// static, trimmed, the release build tags) without each test building its
// own. `make test` builds them once, before `go test` starts, into the
// folder named by $TOPOSCOPE_RELEASE_DIR, together with the linker's
// dependency dump of bin/toposcope; every test of the run (the dead-code
// check, the container image, the system packages, the end-to-end runs of
// `toposcope serve`) then uses those files. A plain `go test` without the
// variable builds them with the same `make build` into the test's own
// temporary folder, so that two tests never write one file.
package releasebin

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// EnvDir names the folder that holds the run's prebuilt release binaries.
const EnvDir = "TOPOSCOPE_RELEASE_DIR"

// File names inside a release folder, as the Makefile writes them.
const (
	serverName = "toposcope"
	agentName  = "toposcope-agent"
	depsName   = "toposcope.deps"
)

// Release is one set of release binaries.
type Release struct {
	// Dir holds both binaries under their own names: hack/image.sh and
	// hack/package.sh take it as BIN.
	Dir string
	// Server is the path of toposcope, Agent of toposcope-agent.
	Server, Agent string
	// Deps is the linker's -dumpdep output of Server.
	Deps string
	// Version is what Server prints for --version, without the program name.
	Version string
}

// Get returns the run's release binaries: those in $TOPOSCOPE_RELEASE_DIR
// when it is set (a missing file there fails the test: `make test`
// builds all of them), else a fresh `make build` in a temporary folder of
// t's.
func Get(ctx context.Context, t testing.TB) Release {
	t.Helper()
	if dir := os.Getenv(EnvDir); dir != "" {
		r := at(dir)
		for _, f := range []string{r.Server, r.Agent, r.Deps} {
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("%s=%s lacks a file `make test` builds: %v", EnvDir, dir, err)
			}
		}
		r.Version = version(ctx, t, r.Server)
		return r
	}
	return build(ctx, t, "", true)
}

// Build runs `make build` with the given version into a new temporary
// folder of t's and returns the binaries (Deps is not written). Compiled
// packages come from Go's build cache; the link is new.
func Build(ctx context.Context, t testing.TB, ver string) Release {
	t.Helper()
	return build(ctx, t, ver, false)
}

func build(ctx context.Context, t testing.TB, ver string, deps bool) Release {
	t.Helper()
	dir := t.TempDir()
	r := at(dir)
	args := []string{"--no-print-directory", "-C", Root(t), "build", "BIN=" + dir}
	if deps {
		args = append(args, "DEPDUMP="+r.Deps)
	}
	if ver != "" {
		args = append(args, "VERSION="+ver)
	}
	cmd := exec.CommandContext(ctx, "make", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("make build: %v (%v)\n%s", err, context.Cause(ctx), out.String())
	}
	r.Version = version(ctx, t, r.Server)
	if ver != "" && r.Version != ver {
		t.Fatalf("make build VERSION=%s made a binary of version %q", ver, r.Version)
	}
	return r
}

func at(dir string) Release {
	return Release{
		Dir:    dir,
		Server: filepath.Join(dir, serverName),
		Agent:  filepath.Join(dir, agentName),
		Deps:   filepath.Join(dir, depsName),
	}
}

// version runs `bin --version` and returns the version it names.
func version(ctx context.Context, t testing.TB, bin string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	// "toposcope 1.0.1 (commit …, built …, go1.26.x)": the second word.
	f := strings.Fields(string(out))
	if len(f) < 2 {
		t.Fatalf("%s --version printed %q, want \"NAME VERSION ...\"", bin, out)
	}
	return f[1]
}

// Root returns the repository's root folder (the one with the Makefile).
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("releasebin: no caller information")
	}
	root := filepath.Join(filepath.Dir(file), "..", "..")
	if _, err := os.Stat(filepath.Join(root, "Makefile")); err != nil {
		t.Fatalf("releasebin: no Makefile at the repository root %s: %v", root, err)
	}
	return root
}
