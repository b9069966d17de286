// Package slurmtest runs a real slurmctld for tests, so that a test can prove that
// Slurm accepts a generated topology.conf and reads it back the way the generator meant.
//
// Three Slurm versions are supported:
//
//   - [V2205]: Debian bookworm's own slurmctld 22.05 on the host, with munge
//     authentication. It has topology/tree only.
//   - [V2411]: Debian trixie's slurmctld 24.11 in a chroot that hack/install-slurm.sh
//     builds once into the cache folder
//     ${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}/slurm-24.11-trixie.
//     It uses auth/slurm with a per-controller key, and has topology/tree and
//     topology/block.
//   - [V2605]: Debian forky's slurmctld 26.05 in a chroot built the same way
//     (slurm-26.05-forky), with auth/slurm; it also reads topology.yaml
//     ([PluginYAML]) and partitions that name a topology.
//
// A test calls [Require] first (it skips when the component is missing, and fails
// instead when CI=true), then [Start] with the nodes and the topology.conf to load.
// Every controller has its own directory, ports, state and pid files (and, for 24.11,
// its own /run in a private mount namespace, where its authentication socket lives),
// so tests in different packages can run controllers at the same time. The
// controller is stopped when the test ends.
//
// slurmctld always runs in the foreground (-D) as a child of the test process. In that
// mode a topology.conf that slurmctld refuses on `scontrol reconfigure` makes it exit;
// see [Controller.Reconfigure].
package slurmtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Version names a Slurm release series that this package can run.
type Version string

const (
	// V2205 is Slurm 22.05 from the Debian bookworm host packages (topology/tree only).
	V2205 Version = "22.05"
	// V2411 is Slurm 24.11 from Debian trixie, run in the cached chroot.
	V2411 Version = "24.11"
	// V2605 is Slurm 26.05 from Debian forky, run in its cached chroot.
	V2605 Version = "26.05"
)

// versions lists the supported versions, for messages.
var versions = []Version{V2205, V2411, V2605}

// Topology plugin names for [Options].Plugin.
const (
	// PluginTree is the hierarchical switch plugin (SwitchName= lines).
	PluginTree = "topology/tree"
	// PluginBlock is the block plugin (BlockName= and BlockSizes= lines); 23.11 and later.
	PluginBlock = "topology/block"
	// PluginYAML writes Options.Topology as topology.yaml, which 25.05 and
	// later read instead of topology.conf (no TopologyPlugin line).
	PluginYAML = "topology/yaml"
)

// installHint ends every "component missing" message.
const installHint = "run hack/install-slurm.sh (as root) to install it"

// Host paths of the Debian binaries used. Inside the chroot the same paths hold.
const (
	slurmctldBin = "/usr/sbin/slurmctld"
	scontrolBin  = "/usr/bin/scontrol"
	envBin       = "/usr/bin/env"
	chrootBin    = "/usr/sbin/chroot"
	unshareBin   = "/usr/bin/unshare"
	mountBin     = "/usr/bin/mount"
	shBin        = "/bin/sh"
	mungeBin     = "/usr/bin/munge"
	unmungeBin   = "/usr/bin/unmunge"
)

// chrootMarker is the file hack/install-slurm.sh writes last in a chroot.
const chrootMarker = ".complete"

// chrootName is the cache folder name of version v's chroot.
func chrootName(v Version) string {
	if v == V2605 {
		return "slurm-26.05-forky"
	}
	return "slurm-24.11-trixie"
}

// Require skips the test when Slurm version v cannot run here, with a message that
// says to run hack/install-slurm.sh. When the environment variable CI is "true" it
// fails the test instead: CI must never skip the real-Slurm checks silently.
func Require(t testing.TB, v Version) {
	t.Helper()
	if err := available(v); err != nil {
		msg := fmt.Sprintf("slurmtest: Slurm %s is not usable here: %v", v, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true, so this is a failure, not a skip)")
		}
		t.Skip(msg)
	}
}

// available reports why version v cannot run, or nil.
func available(v Version) error {
	switch v {
	case V2205:
		for _, bin := range []string{slurmctldBin, scontrolBin, slurmdBin, mungeBin, unmungeBin} {
			if _, err := os.Stat(bin); err != nil {
				return fmt.Errorf("%s is missing (packages slurmctld, slurmd, slurm-client, munge); %s", bin, installHint)
			}
		}
		if err := versionIs(V2205, slurmctldBin, "-V"); err != nil {
			return err
		}
		return mungeWorks()
	case V2411, V2605:
		if os.Geteuid() != 0 {
			return fmt.Errorf("the Slurm %s chroot needs root (chroot(2))", v)
		}
		root, err := chrootDir(v)
		if err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(root, chrootMarker)); err != nil {
			return fmt.Errorf("no complete chroot at %s (marker %s missing); %s", root, chrootMarker, installHint)
		}
		for _, bin := range []string{slurmctldBin, scontrolBin, envBin} {
			if _, err := os.Stat(filepath.Join(root, bin)); err != nil {
				return fmt.Errorf("chroot %s has no %s; remove it and %s", root, bin, installHint)
			}
		}
		for _, bin := range []string{chrootBin, unshareBin, mountBin, shBin} {
			if _, err := os.Stat(bin); err != nil {
				return fmt.Errorf("%s is missing (coreutils, util-linux, mount)", bin)
			}
		}
		// Every controller gets a private /run in its own mount namespace (see
		// Controller.command), which needs CAP_SYS_ADMIN.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, unshareBin, "--mount", "--propagation", "private", "--", "/bin/true").CombinedOutput(); err != nil {
			return fmt.Errorf("cannot create a mount namespace (unshare --mount: %w: %s)", err, bytes.TrimSpace(out))
		}
		return nil
	default:
		return fmt.Errorf("unknown Slurm version %q (want one of %v)", v, versions)
	}
}

// versionIs checks that `argv` (slurmctld -V) prints version series v.
func versionIs(v Version, argv ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, bytes.TrimSpace(out))
	}
	// "slurm-wlm 22.05.8" on Debian, "slurm 24.11.5" upstream.
	f := strings.Fields(string(out))
	if len(f) < 2 || !strings.HasPrefix(f[1], string(v)+".") {
		return fmt.Errorf("%s reports %q, want Slurm %s.x; %s", argv[0], bytes.TrimSpace(out), v, installHint)
	}
	return nil
}

// mungeWorks checks that munged answers: `munge -n | unmunge`.
func mungeWorks() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cred, err := exec.CommandContext(ctx, mungeBin, "-n").Output()
	if err != nil {
		return fmt.Errorf("munged is not reachable (munge -n: %w; is munged running with /run/munge/munge.socket.2?); %s", err, installHint)
	}
	un := exec.CommandContext(ctx, unmungeBin)
	un.Stdin = bytes.NewReader(cred)
	if out, err := un.CombinedOutput(); err != nil {
		return fmt.Errorf("munged is not usable (unmunge: %w: %s); %s", err, bytes.TrimSpace(out), installHint)
	}
	return nil
}

// chrootDir is the folder that holds version v's chroot, as hack/install-slurm.sh
// computes it.
func chrootDir(v Version) (string, error) {
	if d := os.Getenv("TOPOSCOPE_CACHE"); d != "" {
		return filepath.Join(d, chrootName(v)), nil
	}
	d, err := os.UserCacheDir() // $XDG_CACHE_HOME, else $HOME/.cache
	if err != nil {
		return "", fmt.Errorf("cannot locate the cache folder: %w", err)
	}
	return filepath.Join(d, "toposcope", chrootName(v)), nil
}

// Chroot returns the folder of the Debian trixie chroot with Slurm 24.11
// that hack/install-slurm.sh built, or skips the test as Require(t, V2411)
// does. A test that changes files in it works on a copy.
func Chroot(t testing.TB) string {
	t.Helper()
	Require(t, V2411)
	d, err := chrootDir(V2411)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
