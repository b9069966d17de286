package cli_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toposcope/toposcope/testenv/browser"
)

// TestWebView opens the web view of a real `toposcope serve` on a
// 100,000-node model in Debian's headless Chromium: the tree renders
// aggregated, a search finds a node and shows its path (also from a
// /?q= link), the heatmap shows a ledger record, the placement panel
// ranks candidates and outlines them in the tree, the diff view shows
// what changed between two discoveries, and a shrink held back by the
// guard shows with the request that accepts it. Screenshots are written to the
// test's artifact directory (go test -artifacts keeps them).
func TestWebView(t *testing.T) {
	t.Parallel()
	ctx := browser.Start(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "fat-100k.yaml")
	genModel(t, model, 100000)

	addr := freeAddr(t)
	serveOut := serveInProcess(t, "serve", "--listen", addr, "--model", model, "--store", filepath.Join(dir, "s.db"), "--interval", "1h", "--allow-root")
	base := "http://" + addr
	waitRuns(t, base, 1, serveOut)

	// One allocated, protected record on the eight nodes of one leaf's
	// first quarter (leaf0043 holds gpu001345-gpu001376).
	start := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	post(t, base+"/v1/ledger", fmt.Sprintf(`{"records":[{"account":"team-a","workload":"train-1","gpus":64,`+
		`"nodes":["gpu[001345-001352]"],"start":%q,"minRuntime":14400000000000,"allocated":true}]}`, start), http.StatusOK)

	tctx, tcancel := context.WithTimeout(ctx, 3*time.Minute)
	defer tcancel()
	fail := func(what string, err error) {
		t.Helper()
		errText, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#error")))
		t.Fatalf("%s: %v (page error: %q)\nservice log:\n%s", what, err, errText, serveOut.String())
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tctx, steps...); err != nil {
			fail(what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			fail("read "+sel, err)
		}
		return s
	}
	began := time.Now()
	do("load the page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)))
	t.Logf("the page loaded against 100,000 nodes in %v", time.Since(began))
	totals, rows := text("#totals"), text("#tree")
	cell, err := chromedp.Run(tctx, chromedp.AttributeValue(chromedp.CSS(`.cell[data-id="leaf0043"]`), "title"))
	if err != nil {
		fail("read the heatmap", err)
	}
	if !strings.Contains(totals, "100,000 nodes") || !strings.Contains(totals, "800,000 GPUs") {
		t.Errorf("totals = %q", totals)
	}
	if !strings.Contains(rows, "core") || !strings.Contains(rows, "100,000 nodes") {
		t.Errorf("tree = %q", rows)
	}
	if !strings.Contains(cell.Value, "64 allocated") || !strings.Contains(cell.Value, "protected until") {
		t.Errorf("heatmap cell of leaf0043 = %q; want the record's 64 allocated, protected GPUs", cell.Value)
	}
	screenshot(tctx, t, "overview.png")

	do("search a node",
		chromedp.SetValue(chromedp.CSS("#search"), "gpu054321"),
		chromedp.Click(chromedp.CSS(`#search-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.row.node.hl[data-node="gpu054321"]`)))
	if path := text("#path"); path != "core › spine107 › leaf1698 › gpu054321" {
		t.Errorf("path after search = %q", path)
	}
	screenshot(tctx, t, "search.png")

	do("rank a placement",
		chromedp.Click(chromedp.CSS(`.tabs button[data-tab="place"]`)),
		chromedp.SetValue(chromedp.CSS("#place-account"), "team-a"),
		chromedp.SetValue(chromedp.CSS("#place-gpus"), "16"),
		chromedp.Click(chromedp.CSS(`#place-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#placement .cands li`)),
		chromedp.WaitVisible(chromedp.CSS(`.row.node.cand`)))
	if cands := text("#placement"); !strings.Contains(cands, "#1 ") || !strings.Contains(cands, "team-a") {
		t.Errorf("placement panel = %q", cands)
	}
	screenshot(tctx, t, "placement.png")

	// A second discovery on a grown model: the diff view shows it, each
	// list capped at 50 with the full count from the summary.
	genModel(t, model, 100256)
	post(t, base+"/v1/discover", "{}", http.StatusAccepted)
	waitRuns(t, base, 2, serveOut)
	do("open a link to a node",
		chromedp.Navigate(base+"/?q=gpu100032"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.row.node.hl[data-node="gpu100032"]`)))
	if path := text("#path"); !strings.HasSuffix(path, "› gpu100032") {
		t.Errorf("path from the /?q= link = %q", path)
	}
	do("compare the snapshots",
		chromedp.Click(chromedp.CSS(`.tabs button[data-tab="snaps"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#snapshots tr[data-id="2"]`)),
		chromedp.Click(chromedp.CSS(`#diff-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#diff .diff-summary`)))
	summary := text("#diff")
	for _, want := range []string{"1 → 2", "256 nodes added", "8 switches added", "nodes added: 256", "… 206 more", "gpu100001"} {
		if !strings.Contains(summary, want) {
			t.Errorf("diff view lacks %q: %q", want, summary)
		}
	}
	screenshot(tctx, t, "diff.png")

	// A discovery that loses a fifth of the nodes is held back by the
	// shrink guard: the page says so, with the request that accepts it.
	genModel(t, model, 80000)
	post(t, base+"/v1/discover", "{}", http.StatusAccepted)
	waitRuns(t, base, 3, serveOut)
	do("see the pending shrink", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)),
		chromedp.WaitVisible(chromedp.CSS("#pending")))
	if banner := text("#pending"); !strings.Contains(banner, "Snapshot 3 is held back") || !strings.Contains(banner, "POST /v1/snapshots/3/accept") {
		t.Errorf("pending banner = %q", banner)
	}
	if totals := text("#totals"); !strings.Contains(totals, "100,256 nodes") {
		t.Errorf("while the shrink waits the page must show the current topology: %q", totals)
	}
}

// genModel writes a generated fat tree of n nodes to path.
func genModel(t *testing.T, path string, n int) {
	t.Helper()
	if r := run(t, "model", "generate", "--shape", "fat-tree", "--nodes", fmt.Sprint(n), "--domain-size", "18", "-o", path); r.code != 0 {
		t.Fatalf("model generate: exit %d: %s", r.code, r.stderr)
	}
}

func post(t *testing.T, url, body string, want int) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != want {
		b := make([]byte, 4096)
		n, _ := resp.Body.Read(b)
		t.Fatalf("POST %s = %s %s; want %d", url, resp.Status, b[:n], want)
	}
}

// screenshot writes the whole page as a PNG (quality 100 asks for PNG) to the test's artifact
// directory.
func screenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	keepShot(ctx, t, name, chromedp.FullScreenshot(100))
}

// keepShot takes the screenshot shot and writes it to the test's
// artifact directory as name.
func keepShot(ctx context.Context, t *testing.T, name string, shot chromedp.Action[[]byte]) {
	t.Helper()
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Error(err)
		return
	}
	t.Logf("screenshot %s (%d bytes)", path, len(png))
}

// TestWebViewTokenTLS opens the web view of a service that has tokens
// and serves TLS: the page asks for a token, keeps it for the tab, and
// then shows the cluster.
func TestWebViewTokenTLS(t *testing.T) {
	t.Parallel()
	ctx := browser.Start(t, chromedp.IgnoreCertErrors)
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, dir)
	const token = "read-token-0123456789abcdef"
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("read:"+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "provider:\n  name: sim\n  params:\n    model: small-tree\nserver:\n  listen: %s\n"+
		"  tls:\n    cert: %s\n    key: %s\n  auth:\n    tokensFile: %s\ndiscovery:\n  interval: 1h\n", addr, certFile, keyFile, tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	serveOut := serveInProcess(t, "serve", "--config", cfg, "--store", filepath.Join(dir, "s.db"), "--allow-root")
	base := "https://" + addr
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // the test's own certificate
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/status", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if strings.Contains(string(b), `"ready":true`) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service did not get ready: %v\n%s", err, serveOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	tctx, tcancel := context.WithTimeout(ctx, time.Minute)
	defer tcancel()
	err := chromedp.Do(tctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token-dialog[open]")),
		chromedp.SetValue(chromedp.CSS("#token-input"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[value="ok"]`)),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)))
	if err != nil {
		t.Fatalf("load the page with a token: %v\n%s", err, serveOut.String())
	}
	totals, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS("#totals")))
	if err != nil || !strings.Contains(totals, "16 nodes") {
		t.Errorf("totals = %q, %v", totals, err)
	}
	// A reload asks no more: the token is kept for the tab.
	err = chromedp.Do(tctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)))
	if err != nil {
		t.Errorf("reload: %v", err)
	}
	screenshot(tctx, t, "token-tls.png")
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "toposcope test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
