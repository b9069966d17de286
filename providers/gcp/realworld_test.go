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

// TestRealWorldVariants serves Google's documented answer as other
// versions or a careless proxy might: the discovery document's spelling
// subblock, fields this provider does not know, CRLF line ends. Each is
// read as the original; an answer that is not JSON (a byte-order mark, a
// shell prompt pasted before it) is an error naming the zone and page.
func TestRealWorldVariants(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/realworld/view-instance-topology-list.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, tt := range []struct {
		name, body string
		bad        bool
	}{
		{"as published", doc, false},
		{"subblock", strings.ReplaceAll(doc, `"subBlock"`, `"subblock"`), false},
		{"unknown fields", strings.ReplaceAll(doc, `"physicalHostTopology": {`, `"physicalHostTopology": {"rack": {"x": 1}, "newField": [1, 2],`), false},
		{"CRLF", strings.ReplaceAll(doc, "\n", "\r\n"), false},
		{"byte-order mark", "\ufeff" + doc, true},
		{"prompt", "$ gcloud compute instances list --format=json\n" + doc, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if !tt.bad && tt.body == doc && tt.name != "as published" {
				t.Fatal("the variant changed nothing: the sample's text moved")
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			p := newProvider(t, srv.URL, nil, func(c *gcp.Config) { c.Zones = []string{"europe-west1-b"} })
			req := providers.Request{Credentials: providers.NewCredentials(map[string]string{gcp.CredAccessToken: testToken})}
			g, err := p.Discover(context.Background(), req)
			if tt.bad {
				if err == nil || !strings.Contains(err.Error(), "zone europe-west1-b page 1") {
					t.Fatalf("Discover = %v, want an error naming the zone and page", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n, ok := g.Node("vm-01"); !ok || n.Domain != "0fc09525cbd5abd734342893ca1c083f" || len(g.Nodes()) != 2 {
				t.Errorf("vm-01 = %+v (%d nodes), want it in its sub-block", n, len(g.Nodes()))
			}
		})
	}
}
