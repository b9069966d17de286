package agents_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
)

const clique = "7C1C6F5C-1A2B-4C3D-8E9F-0123456789AB.32766"

// reports is a fixed source of agent reports.
type reports []providers.AgentReport

func (r reports) AgentReports(context.Context) ([]providers.AgentReport, error) { return r, nil }

func deps(src providers.AgentReports, now time.Time) providers.Deps {
	return providers.Deps{Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }, Agents: src}
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	src := reports{
		{Facts: providers.NodeFacts{Node: "gb02", GPUs: 4, Clique: clique, Rack: "r1"}, ReceivedAt: now.Add(-time.Minute)},
		{Facts: providers.NodeFacts{Node: "gb01", GPUs: 4, Clique: clique, Rack: "r1", InstanceID: "i-1", Zone: "z1"}, ReceivedAt: now.Add(-time.Minute)},
		{Facts: providers.NodeFacts{Node: "gb03", GPUs: 4, Clique: clique, Rack: "r2"}, ReceivedAt: now.Add(-2 * time.Hour)},
		{Facts: providers.NodeFacts{Node: "cpu01"}, ReceivedAt: now},
	}
	for _, tc := range []struct {
		name      string
		cfg       func(*agents.Config)
		req       []string
		wantNodes []string
		wantInDom []string
		wantErr   error
	}{
		{name: "every fresh report", wantNodes: []string{"cpu01", "gb01", "gb02"}, wantInDom: []string{"gb01", "gb02"}},
		{name: "any age", cfg: func(c *agents.Config) { c.MaxAge = 0 },
			wantNodes: []string{"cpu01", "gb01", "gb02", "gb03"}, wantInDom: []string{"gb01", "gb02", "gb03"}},
		{name: "requested nodes, stale one unplaced", req: []string{"gb01", "gb03"},
			wantNodes: []string{"gb01", "gb03"}, wantInDom: []string{"gb01"}},
		{name: "configured nodes", cfg: func(c *agents.Config) { c.Nodes = "gb[01-02]" },
			wantNodes: []string{"gb01", "gb02"}, wantInDom: []string{"gb01", "gb02"}},
		{name: "missing is an error", cfg: func(c *agents.Config) { c.Missing = agents.MissingError },
			req: []string{"gb01", "gb03"}, wantErr: agents.ErrMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := agents.DefaultConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			p, err := agents.New(cfg, deps(src, now))
			if err != nil {
				t.Fatal(err)
			}
			var req providers.Request
			for _, n := range tc.req {
				req.Nodes = append(req.Nodes, providers.NodeRef{Name: n})
			}
			g, err := p.Discover(context.Background(), req)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), "gb03") {
					t.Fatalf("Discover = %v, want %v naming gb03", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names, inDom []string
			for _, n := range g.Nodes() {
				names = append(names, n.Name)
				if n.Domain != "" {
					inDom = append(inDom, n.Name)
				}
			}
			if strings.Join(names, ",") != strings.Join(tc.wantNodes, ",") || strings.Join(inDom, ",") != strings.Join(tc.wantInDom, ",") {
				t.Fatalf("nodes %v in domain %v; want %v in %v", names, inDom, tc.wantNodes, tc.wantInDom)
			}
			if len(tc.wantInDom) > 0 {
				d := g.Domains()
				if len(d) != 1 || d[0].Name == "" || !strings.Contains(d[0].ID, "7c1c6f5c") {
					t.Fatalf("domains = %+v, want one, with the clique normalised to lower case", d)
				}
			}
		})
	}
}

func TestDiscoverKeepsIdentityAndRacks(t *testing.T) {
	t.Parallel()
	now := time.Now()
	p, err := agents.New(agents.DefaultConfig(), deps(reports{
		{Facts: providers.NodeFacts{Node: "gb01", GPUs: 4, Clique: clique, Rack: "r1", InstanceID: "i-1", Region: "us-1", Zone: "z1",
			HCAs: []providers.HCA{{Name: "mlx5_0", NodeGUID: "0c42a10300a1b2c3"}, {Name: "mlx5_1"}}}, ReceivedAt: now},
		{Facts: providers.NodeFacts{Node: "gb02", GPUs: 4, Clique: clique, Rack: "r2"}, ReceivedAt: now},
	}, now))
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := g.Node("gb01")
	if n.InstanceID != "i-1" || n.Region != "us-1" || n.Zone != "z1" || n.GPUs != 4 ||
		n.Attributes[agents.HCAsAttribute] != "mlx5_0=0c42a10300a1b2c3,mlx5_1" {
		t.Fatalf("gb01 = %+v", n)
	}
	if d := g.Domains(); len(d) != 1 || len(d[0].SubDomains) != 2 {
		t.Fatalf("domains = %+v, want one with two racks", d)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cfg   func(*agents.Config)
		deps  providers.Deps
		field string
	}{
		{"no source", nil, providers.Deps{}, "server"},
		{"negative maxAge", func(c *agents.Config) { c.MaxAge = -time.Second }, deps(reports{}, time.Now()), "maxAge"},
		{"bad missing", func(c *agents.Config) { c.Missing = "drop" }, deps(reports{}, time.Now()), "missing"},
		{"bad nodes", func(c *agents.Config) { c.Nodes = "gb[01-" }, deps(reports{}, time.Now()), "nodes"},
		{"token without server", func(c *agents.Config) { c.Token = "x" }, deps(reports{}, time.Now()), "token"},
		{"report without node", func(c *agents.Config) { c.Reports = []providers.NodeFacts{{GPUs: 1}} }, providers.Deps{}, "reports[0].node"},
		{"server and reports", func(c *agents.Config) {
			c.Server = &httpretry.Connection{URL: "https://toposcope:49021"}
			c.Reports = []providers.NodeFacts{{Node: "a"}}
		}, providers.Deps{}, "reports"},
		{"bad server URL", func(c *agents.Config) { c.Server = &httpretry.Connection{URL: "ftp://x"} }, providers.Deps{}, "server.url"},
	} {
		cfg := agents.DefaultConfig()
		if tc.cfg != nil {
			tc.cfg(&cfg)
		}
		_, err := agents.New(cfg, tc.deps)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: New = %v, want an error naming %q", tc.name, err, tc.field)
		}
	}
}

// TestDiscoverFabricFromMetadata: a report with the fabric path its
// metadata service gave (OCI's rdmaTopologyData) places the node under
// that path, and its GPU memory fabric is the domain when nvidia-smi gave
// no clique.
func TestDiscoverFabricFromMetadata(t *testing.T) {
	t.Parallel()
	now := time.Now()
	p, err := agents.New(agents.DefaultConfig(), deps(reports{
		{Facts: providers.NodeFacts{Node: "oci1", Fabric: []string{"lb1", "nb1", "hpc1"}, FabricDomain: "gmf1"}, ReceivedAt: now},
		{Facts: providers.NodeFacts{Node: "oci2", Fabric: []string{"lb2", "nb1", "hpc1"}, FabricDomain: "gmf1", Clique: clique}, ReceivedAt: now},
	}, now))
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	var path []string
	for _, s := range g.Path("oci1") {
		path = append(path, s.ID)
	}
	if strings.Join(path, ">") != "lb1>nb1>hpc1" {
		t.Errorf("oci1 path = %v", path)
	}
	n1, _ := g.Node("oci1")
	n2, _ := g.Node("oci2")
	if n1.Domain != "gmf1" || n2.Domain == "gmf1" || n2.Domain == "" {
		t.Errorf("domains: oci1 %q (want the fabric), oci2 %q (want its clique)", n1.Domain, n2.Domain)
	}
}
