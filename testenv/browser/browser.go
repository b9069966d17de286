// Package browser runs Debian's headless Chromium for the web view's
// tests, driven over the DevTools protocol with chromedp.
// hack/setup.sh installs the chromium package.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toposcope/toposcope/testenv/kubetest"
)

// EnvChromium names a Chromium binary to use instead of the one on $PATH.
const EnvChromium = "TOPOSCOPE_CHROMIUM"

// ErrNoChromium is returned when no Chromium binary is found.
var ErrNoChromium = errors.New("browser: no chromium binary")

// Find locates Chromium: $TOPOSCOPE_CHROMIUM, then chromium or
// chromium-browser on $PATH.
func Find() (string, error) {
	if p := os.Getenv(EnvChromium); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: not in $%s or $PATH; run hack/setup.sh (apt-get install chromium)", ErrNoChromium, EnvChromium)
}

// Start runs a headless Chromium with a new empty profile for t and
// returns a context bound to its first tab; the browser is stopped at
// the end of the test. extra options are added to the defaults (for
// example chromedp.IgnoreCertErrors for a test's own certificate).
// Without Chromium it skips the test, except with CI=true, where it
// fails.
func Start(t testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	bin, err := Find()
	switch {
	case err != nil && kubetest.InCI():
		t.Fatalf("CI=true and %v", err)
	case err != nil:
		t.Skip(err)
	}
	// The profile is not a t.TempDir: Chromium's helper processes may
	// still write into it for a moment after the browser has exited, and
	// TempDir's cleanup fails the test when the folder will not go.
	profile, err := os.MkdirTemp("", "toposcope-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(profile),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1600, 1000),
	}
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	if err := chromedp.Do(ctx); err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		removeProfile(t, profile)
	})
	return ctx
}

// removeProfile removes Chromium's profile folder, trying again for a few
// seconds while its helper processes finish; a folder that stays is only
// logged (it is under the system's temporary folder).
func removeProfile(t testing.TB, dir string) {
	var err error
	for range 50 {
		if err = os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("browser: leaving Chromium's profile %s: %v", dir, err)
}
