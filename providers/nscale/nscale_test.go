package nscale_test

import (
	"bytes"
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
	"github.com/toposcope/toposcope/providers/nscale"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/testenv/cloudsim"
	"github.com/toposcope/toposcope/topology"
)

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

func newProvider(t testing.TB, url string, log *slog.Logger, names map[string]string, pageSize int, version ...string) *nscale.Provider {
	t.Helper()
	cfg := nscale.DefaultConfig()
	if len(version) > 0 {
		cfg.APIVersion = version[0]
	}
	cfg.URL, cfg.AllowHTTP, cfg.Organization, cfg.Region, cfg.Nodes, cfg.PageSize = url, true, "org-1", "us-east-1", names, pageSize
	if names == nil {
		cfg.InstanceURL = url // host names from the Instance API
	}
	cfg.Retry = httpretry.Policy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}
	p, err := nscale.New(cfg, providers.Deps{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiscoverAgainstEmulator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		model     string
		faults    cloudsim.Faults
		byID      bool
		noCreds   bool
		wantErr   error
		unplaced  []string
		hostnames bool
		v1        bool
	}{
		{name: "paged", model: "small-tree"},
		{name: "paged, Radar v1", model: "small-tree", v1: true},
		{name: "domains, Radar v1", model: "nvl72", byID: true, v1: true},
		{name: "names from instance API", model: "nvl72", hostnames: true},
		{name: "domains", model: "nvl72", byID: true},
		{name: "throttled then fine", model: "small-tree", faults: cloudsim.Faults{Throttle: 2}},
		{name: "empty final page", model: "small-tree", faults: cloudsim.Faults{EmptyFinalPage: true}},
		{name: "slow page", model: "small-tree", faults: cloudsim.Faults{SlowPage: 2, SlowDelay: 20 * time.Millisecond}},
		{name: "server error fails", model: "small-tree", faults: cloudsim.Faults{ServerErrorPage: 2}, wantErr: providers.ErrUnavailable},
		{name: "repeated token", model: "small-tree", faults: cloudsim.Faults{RepeatToken: true}, wantErr: nscale.ErrRepeatedPage},
		{name: "no credentials", model: "small-tree", noCreds: true, wantErr: providers.ErrNoCredentials},
		{name: "missing topology and omitted", model: "small-tree", byID: true,
			faults: cloudsim.Faults{NoTopology: []string{"i-0sim003"}, Omit: []string{"i-0sim010"}}, unplaced: []string{"gpu003", "gpu010"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := model(t, tt.model)
			srv := httptest.NewServer(cloudsim.NewNscale(cloudsim.FromGraph(want), tt.faults))
			defer srv.Close()
			names := map[string]string{}
			var refs []providers.NodeRef
			for _, n := range want.Nodes() {
				names[n.InstanceID] = n.Name
				refs = append(refs, providers.NodeRef{Name: n.Name, InstanceID: n.InstanceID})
			}
			var logs bytes.Buffer
			if tt.hostnames {
				names = nil
			}
			version := "v2"
			if tt.v1 {
				version = "v1"
			}
			p := newProvider(t, srv.URL, slog.New(slog.NewTextHandler(&logs, nil)), names, 5, version)
			req := providers.Request{Credentials: providers.NewCredentials(map[string]string{nscale.CredToken: cloudsim.Token})}
			if tt.noCreds {
				req.Credentials = providers.Credentials{}
			}
			if tt.byID {
				req.Nodes = refs
			}
			g, err := p.Discover(context.Background(), req)
			out := logs.String()
			if err != nil {
				out += err.Error()
			}
			js, _ := json.Marshal(g)
			if strings.Contains(out+string(js), cloudsim.Token) {
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
			for _, n := range want.Nodes() {
				got, ok := g.Node(n.Name)
				if !ok || cloudsim.PathIDs(g.Path(n.Name)) != cloudsim.PathIDs(want.Path(n.Name)) || got.Domain != n.Domain {
					t.Fatalf("node %s differs from the model", n.Name)
				}
			}
		})
	}
}

func TestFactory(t *testing.T) {
	t.Parallel()
	f := nscale.NewFactory()
	tests := []struct{ name, params, wantErr string }{
		{"example", f.Example, ""},
		{"no url", "organization: o\nregion: r", "params.url"},
		{"no organization", "url: https://x\nregion: r", "params.organization"},
		{"page size", "url: https://x\norganization: o\nregion: r\npageSize: 0", "params.pageSize"},
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
			if err != nil || len(g.Nodes()) != 3 || len(g.Domains()) != 1 || cloudsim.PathIDs(g.Path("node001")) != "leaf-1>spine-1>core-1" {
				t.Fatalf("example: %v", err)
			}
		})
	}
}

// BenchmarkDiscover10k pages 10,000 instances (1000 per page) through the
// Nscale emulator (plus the final empty page).
func BenchmarkDiscover10k(b *testing.B) {
	want, err := sim.GenerateGraph(sim.GenerateOptions{Shape: sim.ShapeNVL72, Nodes: 10_000})
	if err != nil {
		b.Fatal(err)
	}
	emu := cloudsim.NewNscale(cloudsim.FromGraph(want), cloudsim.Faults{})
	srv := httptest.NewServer(emu)
	defer srv.Close()
	p := newProvider(b, srv.URL, slog.New(slog.DiscardHandler), map[string]string{}, 1000)
	req := providers.Request{Credentials: providers.NewCredentials(map[string]string{nscale.CredToken: cloudsim.Token})}
	for b.Loop() {
		g, err := p.Discover(context.Background(), req)
		if err != nil || len(g.Nodes()) != 10_000 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(emu.Calls())/float64(b.N), "calls/op")
}
