package gcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/gcp"
)

// TestRealWorldAnswers reads Compute Engine answers as Google publishes
// them (testdata/realworld/SOURCE.md) through the real client: the
// documented instances.list answer spells the sub-block "subBlock", and
// an instance that exposes its host only has null cluster, block and
// sub-block, so it is unplaced.
func TestRealWorldAnswers(t *testing.T) {
	t.Parallel()
	list, err := os.ReadFile("testdata/realworld/view-instance-topology-list.json")
	if err != nil {
		t.Fatal(err)
	}
	hostOnly, err := os.ReadFile("testdata/realworld/host-only-instance.json")
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(list, &page); err != nil {
		t.Fatal(err)
	}
	var third map[string]any
	if err := json.Unmarshal(hostOnly, &third); err != nil {
		t.Fatal(err)
	}
	third["name"] = "vm-03"
	page.Items = append(page.Items, third)
	answer, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/compute/v1/projects/proj-1/zones/europe-west1-b/instances") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	defer srv.Close()
	p := newProvider(t, srv.URL, nil, func(c *gcp.Config) { c.Zones = []string{"europe-west1-b"} })
	req := providers.Request{Credentials: providers.NewCredentials(map[string]string{gcp.CredAccessToken: testToken})}
	g, err := p.Discover(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for name, sub := range map[string]string{"vm-01": "0fc09525cbd5abd734342893ca1c083f", "vm-02": "1fc18636cbd4abd623553784ca2c174e"} {
		n, ok := g.Node(name)
		path := g.Path(name)
		if !ok || n.Domain != sub || len(path) != 3 || path[0].ID != sub ||
			path[1].ID != "3e3056e23cf91a5cb4a8621b6a52c100" || path[2].ID != "europe-west1-cluster-jfhb" {
			t.Errorf("%s: node %+v, path %d switches; want sub-block %s under its block and cluster", name, n, len(path), sub)
		}
	}
	if un := g.Unplaced(); len(un) != 1 || un[0] != "vm-03" {
		t.Errorf("unplaced %v, want the host-only vm-03", un)
	}
}
