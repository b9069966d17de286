package cli_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDNSRebindingInChromium: a page of an attacker's name that resolves
// to the loopback address (DNS rebinding, played by Chromium's host
// resolver rules) tries the writes that need no token on loopback:
// POST /v1/ledger and PUT /v1/budgets, as same-origin fetches, which the
// browser sends with the attacker's Host and Origin. The service refuses
// both (403); the same fetches from the service's own page
// (http://127.0.0.1:PORT) succeed, so the browser path itself works.
func TestDNSRebindingInChromium(t *testing.T) {
	t.Parallel()
	model := filepath.Join(t.TempDir(), "fat.yaml")
	genModel(t, model, 64)
	tctx, base, _ := openWebView(t, []chromedp.ExecAllocatorOption{chromedp.Flag("host-resolver-rules", "MAP rebind.attacker.example 127.0.0.1")},
		"", "--model", model, "--interval", "1h")
	addr := strings.TrimPrefix(base, "http://")
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	writes := func(tag string) string {
		ledger := fmt.Sprintf(`{"records":[{"account":"evil","workload":%q,"gpus":8,"nodes":["gpu001"],"start":%q}]}`, tag, start)
		budgets := `{"accounts":[{"name":"evil","shares":1}]}`
		return fmt.Sprintf(`Promise.all([
  fetch("/v1/ledger", {method: "POST", headers: {"Content-Type": "application/json"}, body: %q}).then(r => r.status),
  fetch("/v1/budgets", {method: "PUT", headers: {"Content-Type": "application/json"}, body: %q}).then(r => r.status),
]).then(s => s.join(","))`, ledger, budgets)
	}
	for _, tc := range []struct {
		name, origin string
		refused      bool
	}{
		{"rebound-name", "http://rebind.attacker.example:" + port, true},
		{"own-page", "http://" + addr, false},
	} {
		if err := chromedp.Do(tctx, chromedp.Navigate(tc.origin+"/healthz")); err != nil {
			t.Fatalf("%s: open %s: %v", tc.name, tc.origin, err)
		}
		got, err := chromedp.Run(tctx, chromedp.Evaluate[string](writes(tc.name), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: fetch: %v", tc.name, err)
		}
		statuses := strings.Split(got, ",")
		t.Logf("%s (%s): POST /v1/ledger %s, PUT /v1/budgets %s", tc.name, tc.origin, statuses[0], statuses[1])
		for i, s := range statuses {
			refused := s == "403"
			if refused != tc.refused || (!tc.refused && s != "200") {
				t.Errorf("%s: write %d answered %s; refused want %v", tc.name, i, s, tc.refused)
			}
		}
	}
	resp, err := http.Get("http://" + addr + "/v1/ledger")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct {
		Records []struct {
			Workload string `json:"workload"`
		} `json:"records"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	if len(l.Records) != 1 || l.Records[0].Workload != "own-page" {
		t.Errorf("ledger after the attempts: %+v, want only the own page's record", l.Records)
	}
}
