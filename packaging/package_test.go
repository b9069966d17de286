// Package packaging_test builds the .deb and .rpm with hack/package.sh
// (from the run's release binary, testenv/releasebin, and one
// more linked as version 1.0.1 for the upgrade) and checks them with the real Debian tools: lintian, rpm, systemd-analyze,
// and dpkg inside a copy of the Debian trixie chroot the Slurm tests use.
package packaging_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/testenv/budget"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/testenv/releasebin"
	"github.com/toposcope/toposcope/testenv/slurmtest"
)

// units are the systemd units the package installs.
var units = []string{"toposcope.service", "toposcope-reconfigure.path", "toposcope-reconfigure.service"}

func TestPackages(t *testing.T) {
	if _, err := exec.LookPath("lintian"); err != nil && !kubetest.InCI() {
		t.Skip("no lintian (hack/install-nfpm.sh installs the packaging tools)")
	}
	if testing.Short() && !kubetest.InCI() {
		t.Skip("-short: links the release binary")
	}
	root := slurmtest.Chroot(t)
	ctx := budget.Context(t, 20*time.Minute)
	dist := t.TempDir()
	// The first package holds the run's release binary as it is; the
	// upgrade's holds one linked as 1.0.1, so that the upgrade is seen to
	// replace the binary.
	rel := releasebin.Get(ctx, t)
	deb1, rpm1 := build(ctx, t, dist, "1.0.0", rel.Dir)
	deb2, _ := build(ctx, t, dist, "1.0.1", releasebin.Build(ctx, t, "1.0.1").Dir)

	t.Run("lintian", func(t *testing.T) {
		out, _ := exec.CommandContext(ctx, "lintian", "--no-cfg", deb1).CombinedOutput()
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "E: ") {
				t.Errorf("lintian: %s", line)
			}
		}
	})
	debFiles := debContents(ctx, t, deb1)
	t.Run("rpm lists the same files", func(t *testing.T) {
		rpmFiles := strings.Fields(run(ctx, t, "rpm", "-qpl", rpm1))
		only := func(files []string, drop ...string) []string {
			return slices.DeleteFunc(slices.Clone(files), func(f string) bool { return slices.Contains(drop, f) })
		}
		d := only(debFiles, "/usr/share/doc/toposcope/changelog.Debian.gz", "/usr/share/lintian/overrides/toposcope")
		r := only(rpmFiles, "/usr/share/licenses/toposcope/LICENSE")
		slices.Sort(d)
		slices.Sort(r)
		if !slices.Equal(d, r) {
			t.Errorf("deb files %v\nrpm files %v", d, r)
		}
		if c := strings.TrimSpace(run(ctx, t, "rpm", "-qpc", rpm1)); c != "/etc/toposcope/config.yaml" {
			t.Errorf("rpm config files: %q", c)
		}
	})
	t.Run("systemd-analyze verify", func(t *testing.T) { verifyUnits(ctx, t, deb1) })
	t.Run("install, upgrade, purge in the trixie chroot", func(t *testing.T) { installInChroot(ctx, t, root, deb1, deb2, rel.Version) })
	t.Run("the packaged service on slurmctld 24.11", func(t *testing.T) { serviceOnSlurm(ctx, t, root, deb1) })
}

// build runs hack/package.sh for version into dist, packaging the
// toposcope in bin.
func build(ctx context.Context, t *testing.T, dist, version, bin string) (deb, rpm string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "bash", "hack/package.sh", dist)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "VERSION="+version, "BIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/package.sh: %v (%v)\n%s", err, context.Cause(ctx), out)
	}
	deb = filepath.Join(dist, "toposcope_"+version+"_amd64.deb")
	rpm = filepath.Join(dist, "toposcope-"+version+".x86_64.rpm")
	for _, f := range []string{deb, rpm} {
		if _, err := os.Stat(f); err != nil {
			t.Fatal(err)
		}
	}
	return deb, rpm
}

// debContents lists the regular files of a .deb as absolute paths.
func debContents(ctx context.Context, t *testing.T, deb string) []string {
	t.Helper()
	var files []string
	for _, line := range strings.Split(run(ctx, t, "dpkg-deb", "--contents", deb), "\n") {
		f := strings.Fields(line)
		if len(f) == 6 && strings.HasPrefix(f[0], "-") {
			files = append(files, strings.TrimPrefix(f[5], "."))
		}
	}
	return files
}

// verifyUnits unpacks the .deb over a root holding the host's systemd
// units and the programs the units run, and has systemd-analyze verify
// the package's units there: any message is a failure.
func verifyUnits(ctx context.Context, t *testing.T, deb string) {
	dir := filepath.Join(t.TempDir(), "root")
	run(ctx, t, "dpkg-deb", "-x", deb, dir)
	unitDir := filepath.Join(dir, "usr/lib/systemd/system")
	run(ctx, t, "cp", "-an", "/usr/lib/systemd/system/.", unitDir+"/")
	for _, prog := range []string{"/bin/kill", "/usr/bin/scontrol"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(prog)), 0o755); err != nil {
			t.Fatal(err)
		}
		run(ctx, t, "cp", prog, filepath.Join(dir, prog))
	}
	args := []string{"verify", "--root=" + dir}
	for _, u := range units {
		args = append(args, filepath.Join(unitDir, u))
	}
	if out := run(ctx, t, "systemd-analyze", args...); strings.TrimSpace(out) != "" {
		t.Errorf("systemd-analyze verify: %s", out)
	}
	sec := run(ctx, t, "systemd-analyze", "security", "--offline=yes", "--root="+dir, "toposcope.service")
	if !strings.Contains(sec, "Overall exposure level for toposcope.service: 1.") && !strings.Contains(sec, "exposure level for toposcope.service: 0.") {
		t.Errorf("systemd-analyze security: want an exposure below 2.0:\n%s", lastLines(sec, 3))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// run runs a command and returns its combined output, failing on error.
func run(ctx context.Context, t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestPackagesSideBySide runs hack/package.sh twice at once, each with a
// binary of its own (a stub that prints its version), and checks that
// each package holds its own binary: the runs stage their files in
// folders of their own, so a build beside them (the image's, another
// package's) cannot put its binary into this package.
func TestPackagesSideBySide(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("dpkg-deb"); err != nil && !kubetest.InCI() {
		t.Skip("no dpkg-deb (hack/install-nfpm.sh installs the packaging tools)")
	}
	ctx := budget.Context(t, 5*time.Minute)
	dist := t.TempDir()
	versions := []string{"2.0.0", "2.0.1"}
	bins := make([]string, len(versions))
	for i, v := range versions {
		bins[i] = t.TempDir()
		// It prints its version, and writes one manual page for
		// `toposcope man [--date D] DIR` as the real binary does.
		stub := "#!/bin/sh\nif [ \"$1\" = man ]; then for a; do dir=$a; done; mkdir -p \"$dir\"; " +
			"printf '.TH TOPOSCOPE 1\\n' > \"$dir/toposcope.1\"; exit 0; fi\necho toposcope " + v + "\n"
		if err := os.WriteFile(filepath.Join(bins[i], "toposcope"), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, len(versions))
	for i, v := range versions {
		go func() {
			cmd := exec.CommandContext(ctx, "bash", "hack/package.sh", dist)
			cmd.Dir = ".."
			cmd.Env = append(os.Environ(), "VERSION="+v, "BIN="+bins[i])
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("hack/package.sh for %s: %w\n%s", v, err, out)
			}
			errs <- err
		}()
	}
	for range versions {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range versions {
		dir := t.TempDir()
		run(ctx, t, "dpkg-deb", "-x", filepath.Join(dist, "toposcope_"+v+"_amd64.deb"), dir)
		got, err := os.ReadFile(filepath.Join(dir, "usr/bin/toposcope"))
		if err != nil || !strings.Contains(string(got), "echo toposcope "+v+"\n") {
			t.Errorf("package %s holds /usr/bin/toposcope %q (%v), want its own binary", v, got, err)
		}
	}
}
