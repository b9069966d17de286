package netq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

const (
	testUser = "netq-admin"
	testPass = "Sup3r-S3cret!"
)

type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, d)
	return ctx.Err()
}

// newEmulator serves two ready premises (site-a: 4 hosts, site-b: 2
// hosts) and one that is not ready.
func newEmulator() *emulator {
	return &emulator{
		user: testUser, pass: testPass,
		premises: []Premises{
			{OPID: 30000, Name: "site-a", ConfigKeyViewed: true},
			{OPID: 30001, Name: "site-b", ConfigKeyViewed: true},
			{OPID: 30002, Name: "lab", ConfigKeyViewed: false},
		},
		graphs: map[int64][]Graph{
			30000: {clos("a", 2, 2, []string{"dgx-01", "dgx-02", "dgx-03", "dgx-04"})},
			30001: {clos("b", 2, 1, []string{"dgx-11", "dgx-12"})},
			30002: {clos("c", 1, 1, []string{"lab-1"})},
		},
	}
}

func baseConfig(url, ca string) Config {
	c := DefaultConfig()
	c.URL, c.CAFile, c.Username, c.Password = url, ca, testUser, testPass
	c.Retry = httpretry.Policy{BaseDelay: 100 * time.Millisecond}
	return c
}

func discover(t *testing.T, cfg Config, req providers.Request, log *slog.Logger, rec *recorder) (*topology.Graph, error) {
	t.Helper()
	if rec == nil {
		rec = &recorder{}
	}
	p, err := New(cfg, providers.Deps{Logger: log}, httpretry.WithSleep(rec.sleep),
		httpretry.WithJitter(func(d time.Duration) time.Duration { return d }))
	if err != nil {
		t.Fatal(err)
	}
	return p.Discover(context.Background(), req)
}

func nodeNames(g *topology.Graph) []string {
	var out []string
	for _, n := range g.Nodes() {
		out = append(out, n.Name)
	}
	return out
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		edit     func(c *Config)
		req      []string
		nodes    []string
		switches int
		leaf     map[string]string
	}{
		{"every ready premises", nil, nil,
			[]string{"dgx-01", "dgx-02", "dgx-03", "dgx-04", "dgx-11", "dgx-12"}, 5,
			map[string]string{"dgx-01": "site-a/leaf01", "dgx-02": "site-a/leaf02", "dgx-12": "site-b/leaf01"}},
		{"one premises by name", func(c *Config) { c.Premises = []string{"site-a"} }, nil,
			[]string{"dgx-01", "dgx-02", "dgx-03", "dgx-04"}, 3, map[string]string{"dgx-03": "leaf01"}},
		{"a premises not ready, by opid", func(c *Config) { c.Premises = []string{"30002"} }, nil,
			[]string{"lab-1"}, 2, map[string]string{"lab-1": "leaf01"}},
		{"cluster hosts and a request", func(c *Config) { c.Premises, c.Nodes = []string{"site-a"}, "dgx-0[1-2]" },
			[]string{"dgx-02", "stranger"}, []string{"dgx-02", "stranger"}, 2, map[string]string{"dgx-02": "leaf02", "stranger": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, ca := newEmulator().start(t)
			cfg := baseConfig(url, ca)
			if tt.edit != nil {
				tt.edit(&cfg)
			}
			var req providers.Request
			for _, n := range tt.req {
				req.Nodes = append(req.Nodes, providers.NodeRef{Name: n})
			}
			g, err := discover(t, cfg, req, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(nodeNames(g), tt.nodes) || len(g.Switches()) != tt.switches {
				t.Fatalf("nodes %v, %d switches", nodeNames(g), len(g.Switches()))
			}
			for n, leaf := range tt.leaf {
				if node, _ := g.Node(n); node == nil || node.Leaf != leaf {
					t.Errorf("%s under %+v, want %q", n, node, leaf)
				}
			}
			for _, r := range g.Roots() {
				if len(r.Children) == 0 && r.Level == 0 && len(r.Nodes) == 0 {
					t.Errorf("empty root %s", r.ID)
				}
			}
		})
	}
}

func TestRedundantSpinesCollapse(t *testing.T) {
	t.Parallel()
	url, ca := newEmulator().start(t)
	cfg := baseConfig(url, ca)
	cfg.Premises = []string{"site-a"}
	g, err := discover(t, cfg, providers.Request{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	roots := g.Roots()
	if len(roots) != 1 || roots[0].ID != "spine01" || roots[0].DisplayName != "spine01 (+1)" || len(roots[0].Children) != 2 {
		t.Fatalf("roots = %+v", roots)
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	e := newEmulator()
	e.failures = []failure{{status: 503}, {status: 429, retryAfter: "5"}, {status: 500}}
	url, ca := e.start(t)
	rec := &recorder{}
	cfg := baseConfig(url, ca)
	cfg.Premises = []string{"site-b"}
	if _, err := discover(t, cfg, providers.Request{}, nil, rec); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{100 * time.Millisecond, 5 * time.Second, 400 * time.Millisecond}
	// login, select, fetch (3 failures retried), then the NMX list (404).
	if !slices.Equal(rec.waits, want) || e.callCount() != 7 {
		t.Errorf("waits %v after %d calls, want %v after 7", rec.waits, e.callCount(), want)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		setup  func(e *emulator, c *Config)
		want   error
		msg    string
		sleeps int
	}{
		{"wrong password", func(e *emulator, c *Config) { e.echo = true; c.Password = "x" + testPass },
			providers.ErrAuth, "login: the source refused the credentials: POST https://127.0.0.1", 0},
		{"NetQ down", func(e *emulator, c *Config) {
			e.failures = []failure{{status: 502}, {status: 503}, {status: 504}}
			c.Retry.MaxAttempts = 3
		}, providers.ErrUnavailable, "login: topology source unavailable: POST", 2},
		{"unknown premises", func(_ *emulator, c *Config) { c.Premises = []string{"site-z"} }, nil,
			`premises "site-z" is not offered by NetQ (offered: [site-a (30000) site-b (30001) lab (30002)])`, 0},
		{"no ready premises", func(e *emulator, _ *Config) { e.premises = e.premises[2:] }, nil, "none of the 1 premises is ready", 0},
		{"graph is not a one-element array", func(e *emulator, c *Config) {
			e.graphs[30000] = nil
			c.Premises = []string{"site-a"}
		}, ErrInconsistent, `fetch topology of premises "site-a" (opid 30000): inconsistent NetQ topology graph: want a one-element array, got 0`, 0},
		{"link to an unknown node", func(e *emulator, c *Config) {
			g := e.graphs[30001][0]
			g.Links = append(g.Links, GraphLink{ID: "bl0-*-ghost"})
			e.graphs[30001] = []Graph{g}
			c.Premises = []string{"site-b"}
		}, ErrInconsistent, `link "bl0-*-ghost" joins nodes that are not in the graph`, 0},
		{"certificate not trusted", func(_ *emulator, c *Config) { c.CAFile = "" }, providers.ErrUnavailable,
			"certificate signed by unknown authority", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEmulator()
			url, ca := e.start(t)
			cfg := baseConfig(url, ca)
			tt.setup(e, &cfg)
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			rec := &recorder{}
			_, err := discover(t, cfg, providers.Request{}, log, rec)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Discover() = %v, want %v with %q", err, tt.want, tt.msg)
			}
			if len(rec.waits) != tt.sleeps {
				t.Errorf("%d retries, want %d", len(rec.waits), tt.sleeps)
			}
			for _, secret := range []string{testPass, cfg.Password, loginToken, "premises-token-"} {
				if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
					t.Errorf("secret %q leaked:\n%v\n%s", secret, err, logs.String())
				}
			}
		})
	}
}

// TestTokensNeverLeak makes the server echo the premises token when it
// rejects the fetch: the error quotes the body with the token scrubbed.
func TestTokensNeverLeak(t *testing.T) {
	t.Parallel()
	e := newEmulator()
	e.echo, e.rejectFetch = true, true
	url, ca := e.start(t)
	cfg := baseConfig(url, ca)
	cfg.Premises = []string{"site-a"}
	_, err := discover(t, cfg, providers.Request{}, nil, nil)
	if !errors.Is(err, providers.ErrAuth) || !strings.Contains(err.Error(), `"received":"Bearer [REDACTED]"`) {
		t.Fatalf("Discover() = %v", err)
	}
	if strings.Contains(err.Error(), loginToken) || strings.Contains(err.Error(), premisesToken(30000)) {
		t.Errorf("token leaked: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	cfg := baseConfig("https://127.0.0.1:1/", "")
	cfg.Retry.MaxAttempts = 2
	rec := &recorder{}
	_, err := discover(t, cfg, providers.Request{}, nil, rec)
	if !errors.Is(err, providers.ErrUnavailable) || !strings.Contains(err.Error(), "netq: https://127.0.0.1:1/: login: topology source unavailable: POST https://127.0.0.1:1/api/netq/auth/v1/login") ||
		len(rec.waits) != 1 {
		t.Fatalf("Discover() = %v after %d retries", err, len(rec.waits))
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(c *Config)
		field string
	}{
		{"valid", func(*Config) {}, ""},
		{"no url", func(c *Config) { c.URL = "" }, "url"},
		{"plain http", func(c *Config) { c.URL = "http://netq:32708" }, "url"},
		{"no username", func(c *Config) { c.Username = "" }, "username"},
		{"no password", func(c *Config) { c.Password = "" }, "password"},
		{"empty premises", func(c *Config) { c.Premises = []string{"a", " "} }, "premises[1]"},
		{"nodes", func(c *Config) { c.Nodes = "x[" }, "nodes"},
		{"retry", func(c *Config) { c.Retry.BaseDelay = -1 }, "retry.baseDelay"},
		{"snapshot", func(c *Config) { c.URL, c.Username, c.Password, c.Snapshot = "", "", "", &Graph{} }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := baseConfig("https://netq.example", "")
			tt.edit(&c)
			err := c.Validate()
			var fe *config.FieldError
			if tt.field == "" && err != nil || tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field) {
				t.Fatalf("Validate() = %v, want field %q", err, tt.field)
			}
		})
	}
}

func TestFactoryExample(t *testing.T) {
	t.Parallel()
	f := NewFactory()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(f.Example), &n); err != nil {
		t.Fatal(err)
	}
	p, err := f.New(n.Content[0], "params", providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes()) != 4 || len(g.Switches()) != 3 || g.Depth() != 2 {
		t.Errorf("example graph: %d nodes, %d switches, depth %d", len(g.Nodes()), len(g.Switches()), g.Depth())
	}
}

// TestNVLinkDomains: NMX's compute-node list gives each host its NVLink
// domain (DomainUUID) and chassis; with nvlink auto a NetQ without NMX is
// a warning and no domains, with on it is an error, with off it is not
// asked; a refused Basic auth never shows the password.
func TestNVLinkDomains(t *testing.T) {
	t.Parallel()
	const dom = "3fbfc98b-7f95-4749-ab11-bd351a2aab3e"
	withNMX := func() *emulator {
		e := newEmulator()
		e.computeNodes = []map[string]any{nmxNode("dgx-01", dom, "1825024170029"), nmxNode("dgx-02", dom, "1825024170030"), nmxNode("other", dom, "x")}
		return e
	}
	tests := []struct {
		name      string
		emu       *emulator
		nvlink    string
		pass      string
		wantDoms  int
		wantErr   error
		wantCalls int
	}{
		{"auto with NMX", withNMX(), NVLinkAuto, testPass, 1, nil, 4},
		{"auto without NMX", newEmulator(), NVLinkAuto, testPass, 0, nil, 4},
		{"on without NMX", newEmulator(), NVLinkOn, testPass, 0, errors.New("404"), 4},
		{"off", withNMX(), NVLinkOff, testPass, 0, nil, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, ca := tt.emu.start(t)
			cfg := baseConfig(url, ca)
			cfg.Premises, cfg.NVLink = []string{"site-a"}, tt.nvlink
			var logs bytes.Buffer
			g, err := discover(t, cfg, providers.Request{}, slog.New(slog.NewTextHandler(&logs, nil)), nil)
			if strings.Contains(logs.String()+fmt.Sprint(err), testPass) {
				t.Fatalf("password leaked: %s %v", logs.String(), err)
			}
			if tt.wantErr != nil {
				if err == nil || !strings.Contains(err.Error(), "NVLink") {
					t.Fatalf("err = %v, want the NVLink call's failure", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Domains()) != tt.wantDoms || tt.emu.callCount() != tt.wantCalls {
				t.Fatalf("%d domains after %d calls, want %d after %d", len(g.Domains()), tt.emu.callCount(), tt.wantDoms, tt.wantCalls)
			}
			if tt.wantDoms == 1 {
				n, _ := g.Node("dgx-02")
				if n.Domain != dom || n.SubDomain != "1825024170030" {
					t.Errorf("dgx-02 in %q/%q", n.Domain, n.SubDomain)
				}
				if n3, _ := g.Node("dgx-03"); n3.Domain != "" {
					t.Errorf("dgx-03 (not in NMX) in %q", n3.Domain)
				}
			}
			if tt.name == "auto without NMX" && !strings.Contains(logs.String(), "NMX") {
				t.Errorf("no warning: %s", logs.String())
			}
		})
	}
}
