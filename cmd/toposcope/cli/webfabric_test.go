package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/toposcope/toposcope/testenv/browser"
	"github.com/toposcope/toposcope/topology"
)

// fabricCase is one model the drawn fabric is checked on: how to write
// it, how to move some of its nodes, what to search and place.
type fabricCase struct {
	name string
	// write writes the model to path.
	write func(t *testing.T, path string)
	// moves are replacements in the model file that move nodes.
	moves [][2]string
	// search is a node to look for.
	search string
	// gpus is the size of the placement asked for.
	gpus int
}

// TestWebFabric drives the drawn fabric in headless Chromium on the
// bundled mixed model and on a generated 100,000-node fat tree: the
// canvas draws as many switches, nodes and domains as GET /v1/graph has
// (nodes under no switch in their own group); a search highlights the
// node's leaf; a placement outlines exactly the planner's first
// candidate (the API asked the same); after some nodes move, the
// comparison of the two snapshots marks exactly the nodes GET /v1/diff
// says moved, added and removed. It logs the time of the first draw
// and of a zoom, and keeps a screenshot of each view.
func TestWebFabric(t *testing.T) {
	t.Parallel()
	cases := []fabricCase{
		{
			name:  "mixed",
			write: func(t *testing.T, path string) { copyBundled(t, "mixed", path) },
			moves: [][2]string{
				{"nodes: gpu[001-008]", "nodes: gpu[001-007,009]"}, {"nodes: gpu[009-016]", "nodes: gpu[008,010-016]"},
				{"nodes: gb[01-09]", "nodes: gb[01-08]"}, {"nodes: gb[10-18]", "nodes: gb[09-18]"},
			},
			search: "gb12", gpus: 16,
		},
		{
			name:  "fat-tree-100000",
			write: func(t *testing.T, path string) { genModel(t, path, 100000) },
			moves: [][2]string{
				{"nodes: gpu[054305-054336]", "nodes: gpu[054305-054335,054337]"},
				{"nodes: gpu[054337-054368]", "nodes: gpu[054336,054338-054368]"},
			},
			search: "gpu054321", gpus: 64,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testFabric(t, tc)
		})
	}
}

func testFabric(t *testing.T, tc fabricCase) {
	model := filepath.Join(t.TempDir(), "model.yaml")
	tc.write(t, model)
	tctx, base, out := openWebView(t, nil, "", "--model", model, "--interval", "1h")
	// One record holds a leaf's first nodes, so that the drawing has
	// occupancy and an account to colour by.
	g := getGraph(t, base)
	first := g.Switches()[0].Nodes
	start := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	post(t, base+"/v1/ledger", fmt.Sprintf(`{"records":[{"account":"team-a","workload":"train-1","gpus":16,"nodes":[%q,%q],"start":%q,"minRuntime":"4h","allocated":true}]}`,
		first[0], first[1], start), http.StatusOK)
	began := time.Now()
	do(tctx, t, out, "load the page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)))
	loaded := time.Since(began)
	ds := dataset(tctx, t)
	t.Logf("%s: page ready in %v; fabric fetched in %s ms, built in %s ms, first drawn %s ms after the fetch began (the draw itself %s ms)",
		tc.name, loaded.Round(time.Millisecond), ds["fetchMs"], ds["buildMs"], ds["firstDrawMs"], ds["drawMs"])

	// The drawing's counts are the graph's.
	want := map[string]int{"switches": len(g.Switches()), "nodes": len(g.Nodes()), "domains": len(g.Domains()), "unplaced": len(g.NodesWithoutSwitch())}
	for k, n := range want {
		if ds[k] != fmt.Sprint(n) {
			t.Errorf("the canvas draws %s %s; the graph has %d", ds[k], k, n)
		}
	}
	sum := evalString(tctx, t, `document.getElementById("fabric-summary").textContent`)
	if !strings.Contains(sum, fmt.Sprintf("%s nodes", commas(len(g.Nodes())))) || !strings.Contains(sum, "16 allocated") {
		t.Errorf("summary %q; want %d nodes and the record's 16 allocated GPUs", sum, len(g.Nodes()))
	}
	panelShot(tctx, t, "fabric-"+tc.name+".png")
	// Colour by account: the legend names the ledger's account.
	do(tctx, t, out, "colour by account", chromedp.Click(chromedp.CSS("#by-account")),
		chromedp.WaitVisible(chromedp.CSS(`#fabric-legend[data-key="accounts:team-a"]`)))
	panelShot(tctx, t, "fabric-accounts-"+tc.name+".png")
	do(tctx, t, out, "colour by occupancy", chromedp.Click(chromedp.CSS("#by-account")))

	zoom(tctx, t, out, tc, g)

	// A search highlights the node's leaf.
	n, _ := g.Node(tc.search)
	do(tctx, t, out, "search", chromedp.SetValue(chromedp.CSS("#search"), tc.search),
		chromedp.Click(chromedp.CSS(`#search-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#fabric[data-highlight=%q][data-highlight-node=%q]`, n.Leaf, tc.search))))
	if focus := evalString(tctx, t, `document.getElementById("fabric-focus").textContent`); !strings.Contains(focus, "leaf "+n.Leaf) {
		t.Errorf("the focus text %q does not name the leaf %s", focus, n.Leaf)
	}
	panelShot(tctx, t, "fabric-search-"+tc.name+".png")

	// A placement outlines the planner's first candidate.
	req := fmt.Sprintf(`{"account":"team-a","gpus":%d,"duration":3600000000000}`, tc.gpus)
	var planned struct {
		Candidates []struct {
			Nodes []struct{ Node string } `json:"nodes"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(call(t, http.MethodPost, base+"/v1/placements", req, http.StatusOK), &planned); err != nil || len(planned.Candidates) == 0 {
		t.Fatalf("placements: %v %+v", err, planned)
	}
	var names []string
	for _, c := range planned.Candidates[0].Nodes {
		names = append(names, c.Node)
	}
	do(tctx, t, out, "rank a placement", chromedp.Click(chromedp.CSS(`.tabs button[data-tab="place"]`)),
		chromedp.SetValue(chromedp.CSS("#place-account"), "team-a"), chromedp.SetValue(chromedp.CSS("#place-gpus"), fmt.Sprint(tc.gpus)),
		chromedp.Click(chromedp.CSS(`#place-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#fabric[data-outlined-rank="1"]`)))
	if got := dataset(tctx, t)["outlined"]; got != strings.Join(names, ",") {
		t.Errorf("outlined %q; the planner's first candidate is %q", got, strings.Join(names, ","))
	}
	screenshot(tctx, t, "fabric-placement-"+tc.name+".png")

	// Nodes move: the comparison marks exactly what the diff lists.
	data, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range tc.moves {
		if bytes.Count(data, []byte(m[0])) != 1 {
			t.Fatalf("the model has %q %d times", m[0], bytes.Count(data, []byte(m[0])))
		}
		data = bytes.Replace(data, []byte(m[0]), []byte(m[1]), 1)
	}
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	post(t, base+"/v1/discover", "{}", http.StatusAccepted)
	waitRuns(t, base, 2, out)
	do(tctx, t, out, "compare the snapshots", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)),
		chromedp.Click(chromedp.CSS(`.tabs button[data-tab="snaps"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#snapshots tr[data-id="2"]`)),
		chromedp.Click(chromedp.CSS(`#diff-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#fabric[data-mode="changes"][data-to="2"]`)))
	leaves := checkMarks(tctx, t, base, 1, 2)
	t.Logf("%s: both snapshots fetched, merged and drawn in %s ms", tc.name, dataset(tctx, t)["changesMs"])
	panelShot(tctx, t, "fabric-changes-"+tc.name+".png")
	// "next change" zooms into a leaf that holds a moved node.
	do(tctx, t, out, "go to the next change", chromedp.Click(chromedp.CSS("#changes-next")),
		chromedp.WaitVisible(chromedp.CSS(`#fabric[data-zoom]:not([data-zoom=""])`)))
	if z := dataset(tctx, t)["zoom"]; !leaves[z] {
		t.Errorf("next change shows %q; the moved nodes are on %v", z, leaves)
	}
	panelShot(tctx, t, "fabric-changes-next-"+tc.name+".png")
}

// zoom zooms into the first spine by a click and out by the keyboard,
// logging how long each took in the page.
func zoom(tctx context.Context, t *testing.T, out fmt.Stringer, tc fabricCase, g *topology.Graph) {
	t.Helper()
	roots := g.Roots()
	if len(roots) == 0 || len(roots[0].Children) == 0 {
		return
	}
	child := roots[0].Children[0]
	// The first child's cell starts at the left edge of the second row.
	var box struct{ X, Y float64 }
	if err := json.Unmarshal([]byte(evalString(tctx, t, `JSON.stringify((() => { const r = document.getElementById("fabric").getBoundingClientRect(); return {X: r.left, Y: r.top}; })())`)), &box); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	do(tctx, t, out, "zoom into "+child, chromedp.MouseClickXY(box.X+2, box.Y+24*1.5),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#fabric[data-zoom=%q]`, child))))
	clicked := time.Since(began)
	draw := dataset(tctx, t)["drawMs"]
	panelShot(tctx, t, "fabric-zoom-"+tc.name+".png")
	began = time.Now()
	do(tctx, t, out, "zoom out by the keyboard", chromedp.Focus(chromedp.CSS("#fabric")), chromedp.KeyEvent(kb.Escape),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#fabric[data-zoom=%q]`, roots[0].ID))))
	t.Logf("%s: zoom into %s: %v from the click to the drawn picture (draw %s ms); out by Escape: %v (draw %s ms)",
		tc.name, child, clicked.Round(time.Millisecond), draw, time.Since(began).Round(time.Millisecond), dataset(tctx, t)["drawMs"])
	// The keyboard walks the tree: from the top down to the first
	// child, its text said.
	do(tctx, t, out, "walk down", chromedp.KeyEvent(kb.Home), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
	if f := evalString(tctx, t, `document.getElementById("fabric-focus").textContent`); !strings.Contains(f, "switch "+child) {
		t.Errorf("after ArrowDown the focus says %q; want switch %s", f, child)
	}
}

// checkMarks compares the nodes the drawing marks with GET /v1/diff and
// returns the leaves the moved nodes are on.
func checkMarks(tctx context.Context, t *testing.T, base string, from, to int) map[string]bool {
	t.Helper()
	var d struct {
		NodesAdded, NodesRemoved []string
		NodesMoved               []struct {
			Name string
			To   struct{ Leaf string }
		}
		SwitchesAdded   []string
		SwitchesRemoved []string
		Truncated       bool
	}
	if err := json.Unmarshal(call(t, http.MethodGet, fmt.Sprintf("%s/v1/diff?from=%d&to=%d&limit=1000", base, from, to), "", http.StatusOK), &d); err != nil {
		t.Fatal(err)
	}
	if d.Truncated {
		t.Fatal("the diff is longer than the test reads")
	}
	var moved []string
	leaves := map[string]bool{}
	for _, m := range d.NodesMoved {
		moved = append(moved, m.Name)
		leaves[m.To.Leaf] = true
	}
	ds := dataset(tctx, t)
	for _, c := range []struct {
		key  string
		want []string
	}{{"moved", moved}, {"added", d.NodesAdded}, {"removed", d.NodesRemoved}, {"switchesAdded", d.SwitchesAdded}, {"switchesRemoved", d.SwitchesRemoved}} {
		got := []string{}
		if ds[c.key] != "" {
			got = strings.Split(ds[c.key], ",")
		}
		want := append([]string{}, c.want...)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%d → %d: the drawing marks %s %v; the diff lists %v", from, to, c.key, got, want)
		}
	}
	if len(moved) == 0 && len(d.NodesRemoved) == 0 {
		t.Error("nothing changed: the test changes nothing")
	}
	return leaves
}

func do(ctx context.Context, t *testing.T, out fmt.Stringer, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		errText, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("error").textContent`))
		t.Fatalf("%s: %v (page error: %q)\nservice log:\n%s", what, err, errText, out.String())
	}
}

func evalString(ctx context.Context, t *testing.T, js string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return s
}

// dataset returns the canvas's data attributes.
func dataset(ctx context.Context, t *testing.T) map[string]string {
	t.Helper()
	var ds map[string]string
	if err := json.Unmarshal([]byte(evalString(ctx, t, `JSON.stringify(Object.assign({}, document.getElementById("fabric").dataset))`)), &ds); err != nil {
		t.Fatal(err)
	}
	return ds
}

func getGraph(t *testing.T, base string) *topology.Graph {
	t.Helper()
	var g topology.Graph
	if err := json.Unmarshal(call(t, http.MethodGet, base+"/v1/graph", "", http.StatusOK), &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// call sends a request without a token and returns the body of the
// wanted status.
func call(t *testing.T, method, url, body string, want int) []byte {
	t.Helper()
	return callToken(t, method, url, "", body, want)
}

func callToken(t *testing.T, method, url, token, body string, want int) []byte {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s = %d %s; want %d", method, url, resp.StatusCode, b, want)
	}
	return b
}

func copyBundled(t *testing.T, name, path string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "providers", "sim", "models", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// commas writes n as the page does (en-US grouping).
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestWebFabricAccept: on a service with read and write tokens, a
// discovery that loses a leaf switch and its eight nodes is held back;
// the page (given the read token) draws what it would remove, exactly
// the diff's nodes and switch, and its accept button, refused for the
// read token, asks for a token with the write scope and then accepts.
func TestWebFabricAccept(t *testing.T) {
	t.Parallel()
	ctx := browser.Start(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "model.yaml")
	copyBundled(t, "mixed", model)
	const reader, writer = "read-token-0123456789abcdef", "write-token-0123456789abcdef"
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("read:"+reader+"\nwrite:"+writer+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "provider:\n  name: sim\n  params:\n    model: %s\nserver:\n  listen: %s\n  auth:\n    tokensFile: %s\ndiscovery:\n  interval: 1h\n",
		model, addr, tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	out := serveInProcess(t, "serve", "--config", cfg, "--store", filepath.Join(dir, "s.db"), "--allow-root")
	base := "http://" + addr
	runs := func(n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			req, _ := http.NewRequest(http.MethodGet, base+"/v1/runs", nil)
			req.Header.Set("Authorization", "Bearer "+reader)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				b, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if strings.Count(string(b), `"trigger":`) >= n {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no run %d:\n%s", n, out.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	runs(1)
	tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	do(tctx, t, out, "load with the read token", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#token-dialog[open]")),
		chromedp.SetValue(chromedp.CSS("#token-input"), reader), chromedp.Click(chromedp.CSS(`#token-form button[value="ok"]`)),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)))

	data, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	const leaf2 = "      - id: leaf2\n        nodes: gpu[009-016]\n"
	if !bytes.Contains(data, []byte(leaf2)) {
		t.Fatalf("the mixed model has no %q", leaf2)
	}
	if err := os.WriteFile(model, bytes.Replace(data, []byte(leaf2), nil, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	callToken(t, http.MethodPost, base+"/v1/discover", writer, "{}", http.StatusAccepted)
	runs(2)
	do(tctx, t, out, "show the held-back shrink", chromedp.WaitVisible(chromedp.CSS(`body[data-pending="2"]`)),
		chromedp.Click(chromedp.CSS("#pending-show")), chromedp.WaitVisible(chromedp.CSS(`#fabric[data-mode="changes"][data-to="2"]`)))
	ds := dataset(tctx, t)
	var d struct {
		NodesRemoved    []string
		SwitchesRemoved []string
	}
	if err := json.Unmarshal(callToken(t, http.MethodGet, base+"/v1/diff?from=1&to=2&limit=1000", reader, "", http.StatusOK), &d); err != nil {
		t.Fatal(err)
	}
	if ds["removed"] != strings.Join(d.NodesRemoved, ",") || ds["switchesRemoved"] != strings.Join(d.SwitchesRemoved, ",") || len(d.NodesRemoved) != 8 {
		t.Errorf("the drawing marks removed %q and %q; the diff lists %v and %v", ds["removed"], ds["switchesRemoved"], d.NodesRemoved, d.SwitchesRemoved)
	}
	if text := evalString(tctx, t, `document.getElementById("changes-text").textContent`); !strings.Contains(text, "Snapshot 2 is held back") {
		t.Errorf("the changes bar says %q", text)
	}
	screenshot(tctx, t, "fabric-pending.png")
	do(tctx, t, out, "accept with the write token", chromedp.Click(chromedp.CSS("#changes-accept")),
		chromedp.WaitVisible(chromedp.CSS("#token-dialog[open]")))
	if why := evalString(tctx, t, `document.getElementById("token-why").textContent`); !strings.Contains(why, "write scope") {
		t.Errorf("the token dialog says %q; want it to ask for the write scope", why)
	}
	do(tctx, t, out, "give the write token", chromedp.SetValue(chromedp.CSS("#token-input"), writer),
		chromedp.Click(chromedp.CSS(`#token-form button[value="ok"]`)),
		chromedp.WaitVisible(chromedp.CSS(`body[data-snapshot="2"][data-pending=""]`)),
		chromedp.WaitVisible(chromedp.CSS(`#fabric[data-mode="current"][data-nodes="34"]`)))
	var st struct{ Current struct{ ID int } }
	if err := json.Unmarshal(callToken(t, http.MethodGet, base+"/v1/status", reader, "", http.StatusOK), &st); err != nil || st.Current.ID != 2 {
		t.Errorf("after the accept the current snapshot is %d (%v); want 2", st.Current.ID, err)
	}
}

// panelShot writes the drawn fabric's panel as a PNG to the test's
// artifact directory.
func panelShot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	keepShot(ctx, t, name, chromedp.Screenshot(chromedp.CSS("#fabric-panel")))
}
