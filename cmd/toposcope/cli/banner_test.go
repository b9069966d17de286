package cli_test

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bannerLink is the first link of a line of serve's banner.
var bannerLink = regexp.MustCompile(`(?m)^  [a-z ]+:\s+(http://\S+)`)

// TestServeBannerLinksAnswer: on the default model, the link of every line
// serve prints (but the one with a placeholder) answers 200 from the real
// server.
func TestServeBannerLinksAnswer(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	out := serveInProcess(t, "serve", "--listen", addr, "--store", filepath.Join(t.TempDir(), "s.db"), "--interval", "1h", "--allow-root")
	waitRuns(t, "http://"+addr, 1, out)
	links := bannerLink.FindAllStringSubmatch(out.String(), -1)
	if len(links) < 8 {
		t.Fatalf("%d links in the banner, want 8 or more:\n%s", len(links), out)
	}
	for _, m := range links {
		link := m[1]
		if strings.Contains(link, "<") {
			continue
		}
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %s, want 200", link, resp.Status)
		}
	}
}
