package packaging_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// installed copies the chroot, installs deb into the copy with dpkg -i
// and returns the copy's folder and a function that runs a command in it.
func installed(ctx context.Context, t *testing.T, chroot, deb string) (string, func(args ...string) string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "trixie")
	run(ctx, t, "cp", "-a", chroot, root)
	in := func(args ...string) string {
		t.Helper()
		return run(ctx, t, "chroot", append([]string{root}, args...)...)
	}
	run(ctx, t, "cp", deb, filepath.Join(root, "tmp", filepath.Base(deb)))
	in("dpkg", "-i", "/tmp/"+filepath.Base(deb))
	return root, in
}

// installInChroot installs deb1 with dpkg into a copy of the trixie
// chroot, checks the user, the files, the conffile and that the binary
// (of version binVersion) runs as that user; edits the configuration, upgrades to deb2 and checks
// the edit survived; purges and checks the state is gone.
func installInChroot(ctx context.Context, t *testing.T, chroot, deb1, deb2, binVersion string) {
	root, in := installed(ctx, t, chroot, deb1)
	run(ctx, t, "cp", deb2, filepath.Join(root, "tmp", filepath.Base(deb2)))

	user := strings.Split(strings.TrimSpace(in("getent", "passwd", "toposcope")), ":")
	if len(user) != 7 || user[2] == "0" || user[5] != "/var/lib/toposcope" || user[6] != "/usr/sbin/nologin" {
		t.Errorf("the toposcope user: %v", user)
	}
	if owner := strings.TrimSpace(in("stat", "-c", "%U:%G %a", "/var/lib/toposcope/slurm")); owner != "toposcope:toposcope 755" {
		t.Errorf("/var/lib/toposcope/slurm: %s", owner)
	}
	if c := in("dpkg-query", "-W", "-f=${Conffiles}", "toposcope"); !strings.Contains(c, "/etc/toposcope/config.yaml") {
		t.Errorf("conffiles: %q", c)
	}
	for _, f := range []string{"/usr/bin/toposcope", "/usr/lib/systemd/system/toposcope.service", "/usr/lib/toposcope/slurm-trigger", "/usr/share/man/man1/toposcope.1.gz", "/usr/share/man/man1/toposcope-accept.1.gz", "/usr/share/man/man1/toposcope-status.1.gz"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("installed file: %v", err)
		}
	}
	if v := in("runuser", "-u", "toposcope", "--", "toposcope", "--version"); !strings.Contains(v, binVersion) {
		t.Errorf("toposcope --version as toposcope: %q", v)
	}
	if v := in("runuser", "-u", "toposcope", "--", "toposcope", "check", "--config", "/etc/toposcope/config.yaml"); !strings.Contains(v, "valid") {
		t.Errorf("toposcope check of the shipped configuration: %q", v)
	}

	conf := filepath.Join(root, "etc/toposcope/config.yaml")
	edited, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "tmp/enabled.yaml"), []byte(enabledConfig(t, string(edited))), 0o644); err != nil {
		t.Fatal(err)
	}
	if v := in("runuser", "-u", "toposcope", "--", "toposcope", "check", "--config", "/tmp/enabled.yaml"); !strings.Contains(v, "provider infiniband; engines slurm") {
		t.Errorf("toposcope check of the configuration with its slurm engine enabled: %q", v)
	}
	edited = []byte(strings.Replace(string(edited), "interval: 10m", "interval: 7m", 1))
	if err := os.WriteFile(conf, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	in("dpkg", "-i", "/tmp/"+filepath.Base(deb2))
	if v := in("runuser", "-u", "toposcope", "--", "toposcope", "--version"); !strings.Contains(v, "1.0.1") {
		t.Errorf("after the upgrade, toposcope --version: %q", v)
	}
	if got, err := os.ReadFile(conf); err != nil || string(got) != string(edited) || !strings.Contains(string(got), "interval: 7m") {
		t.Errorf("the upgrade did not keep the edited configuration (%v):\n%s", err, got)
	}

	in("dpkg", "--purge", "toposcope")
	for _, gone := range []string{"/var/lib/toposcope", "/etc/toposcope/config.yaml", "/usr/bin/toposcope"} {
		if _, err := os.Stat(filepath.Join(root, gone)); !os.IsNotExist(err) {
			t.Errorf("after purge, %s: %v", gone, err)
		}
	}
}
