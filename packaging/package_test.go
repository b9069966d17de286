// Package packaging_test builds the .deb and .rpm with hack/package.sh and
// checks them with the real Debian tools: lintian, rpm, systemd-analyze,
// and dpkg inside a copy of the Debian trixie chroot the Slurm tests use.
package packaging_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/testenv/kubetest"
	"github.com/toposcope/toposcope/internal/testenv/slurmtest"
)

// units are the systemd units the package installs.
var units = []string{"toposcope.service", "toposcope-reconfigure.path", "toposcope-reconfigure.service"}

func TestPackages(t *testing.T) {
	if _, err := exec.LookPath("lintian"); err != nil && !kubetest.InCI() {
		t.Skip("no lintian (hack/install-nfpm.sh installs the packaging tools)")
	}
	if testing.Short() && !kubetest.InCI() {
		t.Skip("-short: builds the release binary twice")
	}
	root := slurmtest.Chroot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	dist := t.TempDir()
	deb1, rpm1 := build(ctx, t, dist, "1.0.0")
	deb2, _ := build(ctx, t, dist, "1.0.1")

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
	t.Run("install, upgrade, purge in the trixie chroot", func(t *testing.T) { installInChroot(ctx, t, root, deb1, deb2) })
	t.Run("the packaged service on slurmctld 24.11", func(t *testing.T) { serviceOnSlurm(ctx, t, root, deb1) })
}

// build runs hack/package.sh for version into dist.
func build(ctx context.Context, t *testing.T, dist, version string) (deb, rpm string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "bash", "hack/package.sh", dist)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "VERSION="+version)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/package.sh: %v\n%s", err, out)
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
