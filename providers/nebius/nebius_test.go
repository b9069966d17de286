package nebius_test

import (
	"bytes"
	"context"
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
	"github.com/toposcope/toposcope/providers/nebius"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/testenv/cloudsim"
	"github.com/toposcope/toposcope/topology"
)

const project = "project-e00toposcope"

var fast = httpretry.Policy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}

func model(t testing.TB, name string) *topology.Graph {
	t.Helper()
	g, err := sim.LoadGraph(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// start serves the instances of g on a Nebius emulator.
func start(t *testing.T, g *topology.Graph, f cloudsim.Faults) (*cloudsim.Nebius, string) {
	t.Helper()
	emu := cloudsim.NewNebius(cloudsim.FromGraph(g), f, cloudsim.Token, project)
	emu.RetryDelay = time.Millisecond
	addr, err := emu.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Stop)
	return emu, "http://" + addr
}

func newProvider(t *testing.T, url string, log *slog.Logger, mut func(*nebius.Config), opts ...nebius.Option) *nebius.Provider {
	t.Helper()
	cfg := nebius.DefaultConfig()
	cfg.URL, cfg.AllowHTTP, cfg.Project, cfg.Token, cfg.PageSize, cfg.Retry, cfg.MetadataURL = url, true, project, cloudsim.Token, 7, fast, "-"
	if mut != nil {
		mut(&cfg)
	}
	opts = append([]nebius.Option{nebius.WithGetenv(func(string) string { return "" })}, opts...)
	p, err := nebius.New(cfg, providers.Deps{Logger: log}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDiscoverAgainstEmulator runs the provider through grpc-go against
// the emulator: paging, throttling with RetryInfo, failures, partial
// answers.
func TestDiscoverAgainstEmulator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		model    string
		faults   cloudsim.Faults
		mut      func(*nebius.Config)
		wantErr  error
		unplaced []string
	}{
		{name: "paged, with NVLink groups", model: "nvl72"},
		{name: "throttled then fine", model: "small-tree", faults: cloudsim.Faults{Throttle: 3}},
		{name: "throttled too long", model: "small-tree", faults: cloudsim.Faults{Throttle: 100}, wantErr: providers.ErrUnavailable},
		{name: "server error fails", model: "small-tree", faults: cloudsim.Faults{ServerErrorPage: 2}, wantErr: providers.ErrUnavailable},
		{name: "slow page", model: "small-tree", faults: cloudsim.Faults{SlowPage: 2, SlowDelay: 20 * time.Millisecond}},
		{name: "page slower than the timeout", model: "small-tree", faults: cloudsim.Faults{SlowPage: 2, SlowDelay: time.Minute},
			mut: func(c *nebius.Config) { c.Timeout = 50 * time.Millisecond }, wantErr: providers.ErrUnavailable},
		{name: "repeated token", model: "small-tree", faults: cloudsim.Faults{RepeatToken: true}, wantErr: nebius.ErrRepeatedToken},
		{name: "wrong token", model: "small-tree", mut: func(c *nebius.Config) { c.Token = "not-the-token-0123" }, wantErr: providers.ErrAuth},
		{name: "another project", model: "small-tree", mut: func(c *nebius.Config) { c.Project = "project-other" }},
		{name: "missing topology and omitted", model: "small-tree",
			faults: cloudsim.Faults{NoTopology: []string{"i-0sim003"}, Omit: []string{"i-0sim010"}}, unplaced: []string{"gpu003", "gpu010"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := model(t, tt.model)
			emu, url := start(t, want, tt.faults)
			var logs bytes.Buffer
			p := newProvider(t, url, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), func(c *nebius.Config) {
				c.Nodes = cloudsim.InstanceNames(want)
				if tt.mut != nil {
					tt.mut(c)
				}
			})
			g, err := p.Discover(context.Background(), providers.Request{Nodes: refs(want)})
			out := logs.String()
			if err != nil {
				out += err.Error()
			}
			if strings.Contains(out, cloudsim.Token) {
				t.Fatalf("token leaked: %s", out)
			}
			if tt.name == "another project" {
				if err == nil || !strings.Contains(err.Error(), "NotFound") {
					t.Fatalf("err = %v, want NotFound", err)
				}
				return
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
				if got := g.Unplaced(); !slices.Equal(got, tt.unplaced) {
					t.Fatalf("unplaced = %v, want %v", got, tt.unplaced)
				}
				if !strings.Contains(out, "gpu010") {
					t.Errorf("unplaced not reported: %s", out)
				}
				return
			}
			cloudsim.SameTopology(t, g, want)
			for _, s := range emu.PageSizes() {
				if s != 7 {
					t.Fatalf("page sizes %v, want 7", emu.PageSizes())
				}
			}
			if pages := (len(want.Nodes()) + 6) / 7; emu.Calls() != pages+tt.faults.Throttle {
				t.Errorf("%d calls, want %d pages + %d throttled", emu.Calls(), pages, tt.faults.Throttle)
			}
		})
	}
}

// TestTokenSources: the request's token, then params.token, then
// IAM_TOKEN, then the metadata service (which also gives the project).
func TestTokenSources(t *testing.T) {
	t.Parallel()
	want := model(t, "small-tree")
	tests := []struct {
		name    string
		creds   map[string]string
		token   string
		env     string
		imds    *cloudsim.IMDS
		project string
		wantErr error
	}{
		{name: "request", creds: map[string]string{nebius.CredToken: cloudsim.Token}, token: "configured-but-wrong-0", project: project},
		{name: "params.token", token: cloudsim.Token, project: project},
		{name: "IAM_TOKEN", env: cloudsim.Token, project: project},
		{name: "metadata token and project", imds: &cloudsim.IMDS{NebiusToken: cloudsim.Token, NebiusProject: project}},
		{name: "metadata without a token", imds: &cloudsim.IMDS{NebiusProject: project}, wantErr: providers.ErrNoCredentials},
		{name: "service-account key only", creds: map[string]string{"serviceAccountId": "sa", "privateKey": "pem"}, project: project, wantErr: providers.ErrNoCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, url := start(t, want, cloudsim.Faults{})
			metaURL := "-"
			if tt.imds != nil {
				srv := httptest.NewServer(tt.imds)
				defer srv.Close()
				metaURL = srv.URL
			}
			p := newProvider(t, url, nil, func(c *nebius.Config) { c.Token, c.Project, c.MetadataURL = tt.token, tt.project, metaURL },
				nebius.WithGetenv(func(k string) string {
					if k == nebius.EnvToken {
						return tt.env
					}
					return ""
				}))
			var req providers.Request
			if tt.creds != nil {
				req.Credentials = providers.NewCredentials(tt.creds)
			}
			g, err := p.Discover(context.Background(), req)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || strings.Contains(err.Error(), "pem") {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Nodes()) != len(want.Nodes()) {
				t.Errorf("%d nodes, want %d", len(g.Nodes()), len(want.Nodes()))
			}
		})
	}
}

func TestFactoryExampleAndValidation(t *testing.T) {
	t.Parallel()
	f := nebius.NewFactory()
	tests := []struct{ name, params, wantErr string }{
		{"example", f.Example, ""},
		{"no project and no metadata", "metadataURL: \"-\"\ntoken: t", "params.project"},
		{"plain http refused", "project: p\nurl: http://127.0.0.1:1", "params.url"},
		{"bad page size", "project: p\npageSize: 5000", "params.pageSize"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tt.params), &doc); err != nil {
				t.Fatal(err)
			}
			p, err := f.New(doc.Content[0], "params", providers.Deps{})
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
			if err != nil {
				t.Fatal(err)
			}
			n, _ := g.Node("computeinstance-e00example01")
			if len(g.Nodes()) != 3 || n == nil || n.Domain != "nvlgroup-e00example1" || cloudsim.PathIDs(g.Path(n.Name)) != "ib-leaf1>ib-spine1>ib-root1" {
				t.Fatalf("example graph: %d nodes, node %+v, path %s", len(g.Nodes()), n, cloudsim.PathIDs(g.Path("computeinstance-e00example01")))
			}
		})
	}
}

// refs requests every node of g by name and instance ID.
func refs(g *topology.Graph) []providers.NodeRef {
	var out []providers.NodeRef
	for _, n := range g.Nodes() {
		out = append(out, providers.NodeRef{Name: n.Name, InstanceID: n.InstanceID})
	}
	return out
}
