package gcp_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/gcp"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/testenv/cloudsim"
	"github.com/toposcope/toposcope/topology"
)

const testToken = "ya29.test-access-token-SECRET"

func model(t testing.TB, name string) *topology.Graph {
	t.Helper()
	m, err := sim.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Graph(providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func newProvider(t testing.TB, url string, log *slog.Logger, mut func(*gcp.Config)) *gcp.Provider {
	t.Helper()
	cfg := gcp.DefaultConfig()
	cfg.Project, cfg.Endpoint, cfg.PageSize = "proj-1", url, 5
	cfg.Retry = httpretry.Policy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}
	if mut != nil {
		mut(&cfg)
	}
	p, err := gcp.New(cfg, providers.Deps{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiscoverAgainstEmulator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		model    string
		zones    []string
		faults   cloudsim.Faults
		byName   bool
		wantErr  error
		unplaced []string
	}{
		{name: "aggregated", model: "small-tree"},
		{name: "zonal", model: "small-tree", zones: []string{"sim-east-1a"}},
		{name: "three tiers by name", model: "nvl72", byName: true},
		{name: "throttled then fine", model: "small-tree", faults: cloudsim.Faults{Throttle: 2}},
		{name: "empty final page", model: "small-tree", faults: cloudsim.Faults{EmptyFinalPage: true}},
		{name: "slow page", model: "small-tree", faults: cloudsim.Faults{SlowPage: 2, SlowDelay: 20 * time.Millisecond}},
		{name: "server error fails", model: "small-tree", faults: cloudsim.Faults{ServerErrorPage: 2}, wantErr: providers.ErrUnavailable},
		{name: "throttled too long", model: "small-tree", faults: cloudsim.Faults{Throttle: 50}, wantErr: providers.ErrUnavailable},
		{name: "repeated token", model: "small-tree", faults: cloudsim.Faults{RepeatToken: true}, wantErr: gcp.ErrRepeatedToken},
		{name: "missing topology and omitted", model: "small-tree", byName: true,
			faults: cloudsim.Faults{NoTopology: []string{"i-0sim003"}, Omit: []string{"i-0sim010"}}, unplaced: []string{"gpu003", "gpu010"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := model(t, tt.model)
			emu := cloudsim.NewGCP("proj-1", cloudsim.FromGraph(want), tt.faults)
			srv := httptest.NewServer(emu)
			defer srv.Close()
			var logs bytes.Buffer
			p := newProvider(t, srv.URL, slog.New(slog.NewTextHandler(&logs, nil)), func(c *gcp.Config) { c.Zones = tt.zones })
			req := providers.Request{Credentials: providers.NewCredentials(map[string]string{gcp.CredAccessToken: testToken})}
			if tt.byName {
				for _, n := range want.Nodes() {
					req.Nodes = append(req.Nodes, providers.NodeRef{Name: n.Name})
				}
			}
			g, err := p.Discover(context.Background(), req)
			out := logs.String()
			if err != nil {
				out += err.Error()
			}
			js, _ := json.Marshal(g)
			if strings.Contains(out+string(js), testToken) {
				t.Fatalf("token leaked: %s", out)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.unplaced != nil {
				if got := g.Unplaced(); !slices.Equal(got, tt.unplaced) || !strings.Contains(out, "gpu010") {
					t.Fatalf("unplaced = %v, want %v; log %s", got, tt.unplaced, out)
				}
				return
			}
			if len(g.Nodes()) != len(want.Nodes()) {
				t.Fatalf("%d nodes, want %d", len(g.Nodes()), len(want.Nodes()))
			}
			for _, n := range want.Nodes() {
				got, ok := g.Node(n.Name)
				path := want.Path(n.Name)
				if !ok || cloudsim.PathIDs(g.Path(n.Name)) != cloudsim.PathIDs(path) || got.Domain != path[0].ID || got.InstanceID != cloudsim.GCPID(cmp.Or(n.InstanceID, n.Name)) {
					t.Fatalf("node %s differs from the model: %+v path %s", n.Name, got, cloudsim.PathIDs(g.Path(n.Name)))
				}
			}
		})
	}
}

func TestFactory(t *testing.T) {
	t.Parallel()
	f := gcp.NewFactory()
	tests := []struct{ name, params, wantErr string }{
		{"example", f.Example, ""},
		{"no project", "zones: [a]", "params.project"},
		{"page size", "project: p\npageSize: 501", "params.pageSize"},
		{"missing credentials file", "project: p\ncredentialsFile: /nonexistent/key.json", "params.credentialsFile"},
		{"domain", "project: p\ndomain: block", "params.domain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(tt.params), &n); err != nil {
				t.Fatal(err)
			}
			p, err := f.New(n.Content[0], "params", providers.Deps{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g, err := p.Discover(context.Background(), providers.Request{})
			if err != nil || len(g.Nodes()) != 3 || len(g.Domains()) != 2 || cloudsim.PathIDs(g.Path("vm-01")) != "sb-1>blk-1>ew1-cluster" {
				t.Fatalf("example: %v", err)
			}
		})
	}
}

func TestRequestCredentialsNamed(t *testing.T) {
	t.Parallel()
	p := newProvider(t, "http://127.0.0.1:1", nil, nil)
	_, err := p.Discover(context.Background(), providers.Request{Credentials: providers.NewCredentials(map[string]string{"password": testToken})})
	if !errors.Is(err, providers.ErrNoCredentials) || !strings.Contains(err.Error(), gcp.CredAccessToken) || strings.Contains(err.Error(), testToken) {
		t.Fatalf("err = %v", err)
	}
}

// BenchmarkDiscover pages 10,000 and 100,000 instances (500 per page)
// through the aggregatedList emulator with the real SDK client, and
// 100,000 again with the first three calls throttled (429, retried with
// backoff); see cloudsim.BenchDiscover.
func BenchmarkDiscover(b *testing.B) {
	graph := func(n int) (*topology.Graph, error) {
		return sim.GenerateGraph(sim.GenerateOptions{Shape: sim.ShapeNVL72, Nodes: n})
	}
	serve := func(in []cloudsim.Instance, f cloudsim.Faults) cloudsim.Emulator {
		return cloudsim.NewGCP("proj-1", in, f)
	}
	req := providers.Request{Credentials: providers.NewCredentials(map[string]string{gcp.CredAccessToken: testToken})}
	cloudsim.BenchDiscover(b, graph, serve, func(ctx context.Context, url string) (*topology.Graph, error) {
		p := newProvider(b, url, slog.New(slog.DiscardHandler), func(c *gcp.Config) { c.PageSize = 500; c.Domain = "none" })
		return p.Discover(ctx, req)
	})
}
