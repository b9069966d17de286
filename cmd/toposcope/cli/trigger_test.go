package cli_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/cmd/toposcope/cli"
	"github.com/toposcope/toposcope/testenv/proctest"
)

// TestTrigger runs the real service and asks it to discover with
// `toposcope trigger`, as the Slurm trigger script does: the service
// records a run started by the API; a service that refuses is exit 1.
func TestTrigger(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	serveOut := serveInProcess(t, "serve", "--listen", addr, "--store", filepath.Join(t.TempDir(), "s.db"), "--interval", "1h", "--allow-root")
	base := "http://" + addr
	waitRuns(t, base, 1, serveOut) // the startup discovery

	var out, errb bytes.Buffer
	if code := cli.Main(context.Background(), []string{"trigger", "--server", base, "gpu001", "gpu002"}, cli.Env{Stdout: &out, Stderr: &errb}); code != 0 {
		t.Fatalf("trigger: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "discovery queued") {
		t.Errorf("trigger printed %q", out.String())
	}
	body := waitRuns(t, base, 2, serveOut)
	if !strings.Contains(body, `"trigger":"api"`) {
		t.Errorf("no run started by the API in %s", body)
	}

	// --url, the former name of --server, still works, and says so.
	errb.Reset()
	if code := cli.Main(context.Background(), []string{"trigger", "--url", base}, cli.Env{Stdout: &out, Stderr: &errb}); code != 0 ||
		!strings.Contains(errb.String(), "--url has been deprecated, use --server") {
		t.Fatalf("trigger --url: exit %d: %q", code, errb.String())
	}
	waitRuns(t, base, 3, serveOut)

	errb.Reset()
	if code := cli.Main(context.Background(), []string{"trigger", "--server", base + "/nowhere"}, cli.Env{Stdout: &out, Stderr: &errb}); code != 1 ||
		!strings.Contains(errb.String(), "404") {
		t.Errorf("a refused trigger: exit %d, %q; want 1 naming the status", code, errb.String())
	}
}

// waitRuns polls GET /v1/runs until it lists n runs and returns its body.
func waitRuns(t *testing.T, base string, n int, log *proctest.Output) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/v1/runs")
		if err == nil {
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			_ = resp.Body.Close()
			if strings.Count(b.String(), `"trigger":`) >= n {
				return b.String()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service did not record %d runs: %v\n%s", n, err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// serveInProcess runs the CLI with args (a serve command) in a goroutine
// until the end of the test, and returns what it prints.
func serveInProcess(t *testing.T, args ...string) *proctest.Output {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &proctest.Output{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		cli.Main(ctx, args, cli.Env{Stdout: out, Stderr: out})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return out
}
