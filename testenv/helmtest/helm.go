// Package helmtest runs the real helm that hack/install-helm.sh builds
// from the helm.sh/helm/v4 module, for the chart's tests.
package helmtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/toposcope/toposcope/testenv/kubetest"
)

// Version is the helm release hack/install-helm.sh builds.
const Version = "v4.3.2"

// EnvHelm names a helm binary to use instead of the cached one.
const EnvHelm = "TOPOSCOPE_HELM"

// ErrNoHelm is returned when no helm binary is found.
var ErrNoHelm = errors.New("helmtest: no helm binary")

// Find locates helm: $TOPOSCOPE_HELM, the cache's bin/helm-<Version>,
// then $PATH.
func Find() (string, error) {
	for _, p := range []string{os.Getenv(EnvHelm), filepath.Join(kubetest.CacheDir(), "bin", "helm-"+Version)} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: not in $%s, the cache or $PATH; run hack/install-helm.sh", ErrNoHelm, EnvHelm)
}

// Helm runs one helm binary with its own empty configuration and cache
// folders, so that tests never read or write the user's.
type Helm struct {
	bin, home string
}

// Require returns a Helm for t. Without a helm binary it skips the test,
// except with CI=true, where it fails.
func Require(t testing.TB) *Helm {
	t.Helper()
	bin, err := Find()
	switch {
	case err != nil && kubetest.InCI():
		t.Fatalf("CI=true and %v", err)
	case err != nil:
		t.Skip(err)
	}
	return &Helm{bin: bin, home: t.TempDir()}
}

// Run runs helm with args and returns its standard output; a non-zero
// exit is an error that holds standard error.
func (h *Helm) Run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(h.home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(h.home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(h.home, "data"),
		"KUBECONFIG="+filepath.Join(h.home, "no-kubeconfig"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %v: %w\n%s", args, err, stderr.String())
	}
	return stdout.String(), nil
}
