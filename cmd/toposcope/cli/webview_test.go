package cli_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toposcope/toposcope/testenv/browser"
	"github.com/toposcope/toposcope/testenv/proctest"
)

// TestWebViewNotPlaced: on the bundled `mixed` model, whose cpu01-cpu08
// hang under no switch, headless Chromium shows them in a collapsed
// "not placed" group of their own (8 nodes), not as rows at the tree's
// top level beside the switches; a search for one opens the group.
func TestWebViewNotPlaced(t *testing.T) {
	t.Parallel()
	tctx, _, _ := openWebView(t, nil, `body[data-ready="true"]`, "--model", "mixed", "--interval", "1h")
	count := func(js string) int {
		t.Helper()
		n, err := chromedp.Run(tctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return n
	}
	if n := count(`document.querySelectorAll("#tree > li > .row.node").length`); n != 0 {
		t.Errorf("%d nodes drawn at the tree's top level; want them in the not-placed group", n)
	}
	group, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(`#tree > li > .row.unplaced`)))
	if err != nil {
		t.Fatalf("no not-placed group: %v", err)
	}
	if !strings.Contains(group, "not placed") || !strings.Contains(group, "8 nodes under no switch") {
		t.Errorf("group row %q, want \"not placed\" with 8 nodes", group)
	}
	if n := count(`[...document.querySelectorAll("#tree > li > .row.unplaced + ul .row.node")].filter(r => r.dataset.node.startsWith("cpu")).length`); n != 8 {
		t.Errorf("the group holds %d cpu nodes, want 8", n)
	}
	if n := count(`document.querySelector("#tree > li > .row.unplaced + ul").hidden ? 1 : 0`); n != 1 {
		t.Error("the group is open before it is asked for")
	}
	screenshot(tctx, t, "not-placed.png")
	// A click on a node's search hit reveals it: the group opens.
	if err := chromedp.Do(tctx, chromedp.SendKeys(chromedp.CSS("#search"), "cpu03\n")); err != nil {
		t.Fatal(err)
	}
	err = pollUntil(tctx, func() bool {
		return count(`document.querySelector("#tree > li > .row.unplaced + ul").hidden ? 0 : 1`) == 1
	})
	if err != nil {
		t.Errorf("searching cpu03 did not open the not-placed group")
	}
}

// pollUntil calls cond every 100 ms until it holds or ctx ends.
func pollUntil(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// TestWebViewUncoveredPerEngine: a service on the `mixed` model that
// publishes a Slurm block topology (which leaves out the 24 nodes in no
// NVLink domain: cpu01-08 and gpu001-016) says in the web view's status
// line how many nodes that engine left out.
func TestWebViewUncoveredPerEngine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	conf := fmt.Sprintf(`provider:
  name: sim
  params: {model: mixed}
engines:
  - name: slurm
    params: {plugin: topology/block, output: %s}
paths:
  write: [%s]
`, filepath.Join(dir, "topology.conf"), dir)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	tctx, _, serveOut := openWebView(t, nil, `body[data-ready="true"]`, "--config", cfg)
	status, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS("#status")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status, "slurm (24 nodes not covered)") {
		t.Errorf("status line %q, want the slurm engine with its 24 uncovered nodes\n%s", status, serveOut.String())
	}
}

// TestWebViewLive: with the page open, a discovery of a larger fabric
// shows its snapshot and node count, and a shrink held back by the guard
// shows its banner, without a reload (the page polls GET /v1/status).
func TestWebViewLive(t *testing.T) {
	t.Parallel()
	model := filepath.Join(t.TempDir(), "fat.yaml")
	genModel(t, model, 64)
	tctx, base, _ := openWebView(t, nil, `body[data-ready="true"][data-snapshot="1"]`, "--model", model, "--interval", "1h")
	// Mark the document: a reload would lose the mark.
	if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`)); err != nil {
		t.Fatal(err)
	}
	genModel(t, model, 80)
	post(t, base+"/v1/discover", `{}`, http.StatusAccepted)
	if err := chromedp.Do(tctx, chromedp.WaitVisible(chromedp.CSS(`body[data-snapshot="2"]`))); err != nil {
		t.Fatalf("the new snapshot did not show: %v", err)
	}
	// The page marks the snapshot before it has drawn the new graph's
	// totals: wait for them (the test's budget bounds the wait).
	if err := chromedp.Do(tctx, chromedp.Poll[chromedp.Void](`document.querySelector("#totals").textContent.includes("80 nodes")`,
		chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Errorf("the totals did not show 80 nodes: %v", err)
	}
	totals, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS("#totals")))
	if err != nil || !strings.Contains(totals, "80 nodes") {
		t.Errorf("totals %q (%v), want 80 nodes", totals, err)
	}
	genModel(t, model, 16) // a shrink the guard holds back
	post(t, base+"/v1/discover", `{}`, http.StatusAccepted)
	if err := chromedp.Do(tctx, chromedp.WaitVisible(chromedp.CSS(`#pending`))); err != nil {
		t.Fatalf("the held-back shrink did not show: %v", err)
	}
	banner, _ := chromedp.Run(tctx, chromedp.Text(chromedp.CSS("#pending")))
	still, err := chromedp.Run(tctx, chromedp.Evaluate[bool](`window.notReloaded === true`))
	if err != nil || !still {
		t.Errorf("the page was reloaded (%v)", err)
	}
	t.Logf("live: totals %q; banner %q", totals, banner)
	screenshot(tctx, t, "live-pending.png")
}

// openWebView serves toposcope in-process with args (its own --listen,
// --store and --allow-root added), waits for the first discovery, starts
// headless Chromium (with opts) and, unless ready is "", opens the web
// view and waits until the CSS selector ready matches. It returns a
// context of the page with a 2-minute budget, the service's URL and its
// log.
func openWebView(t *testing.T, opts []chromedp.ExecAllocatorOption, ready string, args ...string) (context.Context, string, *proctest.Output) {
	t.Helper()
	ctx := browser.Start(t, opts...)
	addr := freeAddr(t)
	out := serveInProcess(t, append(append([]string{"serve"}, args...),
		"--listen", addr, "--store", filepath.Join(t.TempDir(), "s.db"), "--allow-root")...)
	base := "http://" + addr
	waitRuns(t, base, 1, out)
	tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel)
	if ready != "" {
		if err := chromedp.Do(tctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(ready))); err != nil {
			t.Fatalf("load the web view: %v\n%s", err, out.String())
		}
	}
	return tctx, base, out
}
