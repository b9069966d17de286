// Package kubetest runs a real Kubernetes API for tests: Debian's etcd and
// a kube-apiserver built by hack/install-kube.sh, both on free loopback
// ports in a temporary folder, with RBAC enforced. There is no kubelet and
// no controller manager: objects are validated and stored, nothing runs.
//
// One apiserver serves a whole test package. Declare an Env in the test
// package, let TestMain own it, and call Require in every test that needs
// the cluster:
//
//	var env = kubetest.NewEnv()
//
//	func TestMain(m *testing.M) { os.Exit(env.Run(m)) }
//
//	func TestX(t *testing.T) {
//		c := env.Require(t)  // skips (fails when CI=true) without binaries
//		p := c.Prefix(t)     // unique per test: name nodes p+"-..."
//		...
//	}
//
// Tests run in parallel against the one apiserver; Prefix and Namespace
// keep their objects apart.
package kubetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// KubeVersion is the kube-apiserver release hack/install-kube.sh builds.
const KubeVersion = "v1.37.2"

// Environment variables that override where the binaries are found.
const (
	// EnvAPIServer is the path of a kube-apiserver binary.
	EnvAPIServer = "TOPOSCOPE_KUBE_APISERVER"
	// EnvEtcd is the path of an etcd binary.
	EnvEtcd = "TOPOSCOPE_ETCD"
	// EnvCache is toposcope's cache folder (as in hack/install-kube.sh).
	EnvCache = "TOPOSCOPE_CACHE"
)

// ErrNoBinaries is wrapped when etcd or kube-apiserver cannot be found.
var ErrNoBinaries = errors.New("etcd or kube-apiserver not installed (run hack/install-kube.sh)")

// Binaries are the programs a Cluster runs.
type Binaries struct {
	// APIServer and Etcd are absolute paths.
	APIServer, Etcd string
}

// CacheDir is where hack/install-kube.sh keeps built binaries:
// $TOPOSCOPE_CACHE, else $XDG_CACHE_HOME/toposcope, else
// ~/.cache/toposcope.
func CacheDir() string {
	if d := os.Getenv(EnvCache); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "toposcope")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "toposcope-cache")
	}
	return filepath.Join(home, ".cache", "toposcope")
}

// FindBinaries locates kube-apiserver ($TOPOSCOPE_KUBE_APISERVER, the
// cache's bin/kube-apiserver-v1.37.2, then $PATH) and etcd
// ($TOPOSCOPE_ETCD, then $PATH).
func FindBinaries() (Binaries, error) {
	var b Binaries
	var errs []error
	api := []string{os.Getenv(EnvAPIServer), filepath.Join(CacheDir(), "bin", "kube-apiserver-"+KubeVersion)}
	b.APIServer = firstExecutable(api, "kube-apiserver")
	if b.APIServer == "" {
		errs = append(errs, fmt.Errorf("kube-apiserver %s: not in $%s, %s or $PATH", KubeVersion, EnvAPIServer, api[1]))
	}
	b.Etcd = firstExecutable([]string{os.Getenv(EnvEtcd)}, "etcd")
	if b.Etcd == "" {
		errs = append(errs, fmt.Errorf("etcd: not in $%s or $PATH (Debian package etcd-server)", EnvEtcd))
	}
	if len(errs) > 0 {
		return Binaries{}, fmt.Errorf("%w: %w", ErrNoBinaries, errors.Join(errs...))
	}
	return b, nil
}

func firstExecutable(paths []string, name string) string {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

// InCI reports whether the tests run in CI (CI=true), where a missing
// binary is a failure rather than a skip.
func InCI() bool { return os.Getenv("CI") == "true" }
