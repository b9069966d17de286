package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/toposcope/toposcope/placement/simulate"
	"github.com/toposcope/toposcope/testenv/browser"
)

// simulateHTML runs toposcope simulate with --html into dir and returns
// the file's path and the table printed.
func simulateHTML(t *testing.T, dir string, args ...string) (string, string) {
	t.Helper()
	file := filepath.Join(dir, "simulate.html")
	var out, errOut bytes.Buffer
	cmd := newSimulateCmd(&Env{Stdout: &out, Stderr: &errOut})
	cmd.SetArgs(append([]string{"--html", file}, args...))
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("simulate: %v\n%s", err, errOut.String())
	}
	return file, out.String()
}

// TestSimulateHTMLFile: --html writes the page beside the usual table:
// one chart per figure (a delivered/owed one per policy), the summary
// row of every policy, and what was replayed; a file that cannot be
// written fails the command.
func TestSimulateHTMLFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file, table := simulateHTML(t, dir, "--model", "small-tree", "--jobs", "300", "--max-gpus", "64", "--interarrival", "60",
		"--policies", "toposcope,firstfit", "--within", "none", "--fifo")
	if !strings.Contains(table, "mean leaf span") {
		t.Errorf("no table on stdout:\n%s", table)
	}
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for fig, want := range map[string]int{simulate.FigureWaitCDF: 1, simulate.FigureLargestWaits: 1, simulate.FigureOccupancy: 1,
		simulate.FigureDeliveredOwed: 2} {
		if got := strings.Count(string(page), `data-figure="`+fig+`"`); got != want {
			t.Errorf("%d charts of %s, want %d", got, fig, want)
		}
	}
	for _, want := range []string{`<th scope="row">toposcope</th>`, `<th scope="row">firstfit</th>`,
		"300 jobs from a synthetic trace (seed 1) on model small-tree; no compactness constraint; queue order submit, no backfill."} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	cmd := newSimulateCmd(&Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	cmd.SetArgs([]string{"--model", "small-tree", "--jobs", "20", "--policies", "firstfit", "--html", filepath.Join(dir, "missing", "x.html")})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("writing into a missing directory: err %v, want one wrapping ErrNotExist", err)
	}
}

// chartBox is what the page reports of one drawn chart.
type chartBox struct {
	Figure  string  `json:"figure"`
	Title   string  `json:"title"`
	Desc    string  `json:"desc"`
	Width   float64 `json:"width"`
	Height  float64 `json:"height"`
	Legend  int     `json:"legend"`
	Series  int     `json:"series"`
	Drawn   int     `json:"drawn"`
	XLabel  string  `json:"xLabel"`
	YLabel  string  `json:"yLabel"`
	Labeled bool    `json:"labeled"`
}

// TestSimulateHTMLInChromium opens the --html file of the venus
// scenario in Debian's headless Chromium with the network off (a proxy
// that does not answer, every host name unresolvable, and the DevTools
// network emulation offline) and every request the page makes
// recorded: it makes none but the file's own, and it draws one chart
// per figure, each with a non-empty box, its title and desc as its
// accessible name and description, both axis labels, and a legend entry
// per series whose line has a length. A screenshot of the page is kept
// with the page in the test's artifact directory (go test -artifacts keeps them).
func TestSimulateHTMLInChromium(t *testing.T) {
	t.Parallel()
	ctx := browser.Start(t, chromedp.ProxyServer("http://127.0.0.1:9"), chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"))
	file, _ := simulateHTML(t, t.ArtifactDir(), "--scenario", "venus", "--preempt", "--seed", "2")

	var mu sync.Mutex
	var requests []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := chromedp.Call(tctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate("file://"+file), chromedp.WaitVisible(chromedp.CSS("svg.chart"))); err != nil {
		t.Fatal(err)
	}
	raw, err := chromedp.Run(tctx, chromedp.Evaluate[string](`JSON.stringify([...document.querySelectorAll("svg.chart")].map(svg => {
		const [t, d] = svg.getAttribute("aria-labelledby").split(" ").map(id => document.getElementById(id));
		const box = svg.getBoundingClientRect();
		const labels = [...svg.querySelectorAll(".axis-label")].map(e => e.textContent);
		const paths = [...svg.querySelectorAll(".series path[d]")];
		return {figure: svg.dataset.figure, title: t ? t.textContent : "", desc: d ? d.textContent : "",
			width: box.width, height: box.height, legend: svg.querySelectorAll(".legend-entry").length,
			series: svg.querySelectorAll(".series").length, drawn: paths.filter(p => p.getTotalLength() > 0).length,
			xLabel: labels[0] || "", yLabel: labels[1] || "",
			labeled: !!t && t.closest("svg") === svg && !!d && d.closest("svg") === svg};
	}))`))
	if err != nil {
		t.Fatal(err)
	}
	var boxes []chartBox
	if err := json.Unmarshal([]byte(raw), &boxes); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, b := range boxes {
		count[b.Figure]++
		if b.Width < 300 || b.Height < 200 || !b.Labeled || b.Title == "" || len(b.Desc) < 20 || b.XLabel == "" || b.YLabel == "" {
			t.Errorf("chart %+v: want a drawn box, its own title and desc, and both axis labels", b)
		}
		if b.Series == 0 || b.Legend < b.Series || b.Drawn == 0 {
			t.Errorf("chart %s: %d series (%d drawn), %d legend entries", b.Figure, b.Series, b.Drawn, b.Legend)
		}
	}
	policies := len(simulate.Policies())
	for fig, want := range map[string]int{simulate.FigureWaitCDF: 1, simulate.FigureLargestWaits: 1, simulate.FigureOccupancy: 1,
		simulate.FigureDeliveredOwed: policies} {
		if count[fig] != want {
			t.Errorf("%d charts of %s drawn, want %d (%v)", count[fig], fig, want, count)
		}
	}
	png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.ArtifactDir(), "simulate-html.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s (%d bytes)", shot, len(png))
	mu.Lock()
	defer mu.Unlock()
	if len(requests) == 0 {
		t.Error("no request recorded, not even the file's own: the recording does not work")
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, "file://") {
			t.Errorf("the page requested %s", u)
		}
	}
}
