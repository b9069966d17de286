package ufm

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
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
	testUser  = "admin"
	testPass  = "pa55-w0rd!"
	testToken = "tok3n-ABCDEF"
)

// recorder replaces the wait between retries.
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

func newEmulator() *emulator {
	systems, links := fatTree()
	return &emulator{systems: systems, links: links, user: testUser, pass: testPass, token: testToken}
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
	p, err := New(cfg, providers.Deps{Logger: log}, httpretry.WithSleep(rec.sleep), httpretry.WithJitter(func(d time.Duration) time.Duration { return d }))
	if err != nil {
		t.Fatal(err)
	}
	return p.Discover(context.Background(), req)
}

func leafOf(g *topology.Graph, node string) string {
	n, ok := g.Node(node)
	if !ok {
		return "?"
	}
	return n.Leaf
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		edit     func(c *Config)
		req      []string
		nodes    []string
		switches int
		leaves   map[string]string
	}{
		{"basic auth, every host", nil, nil, []string{"gpu001", "gpu002", "gpu003", "gpu004", "stor01"}, 4,
			map[string]string{"gpu001": "2c5eab0300000201", "gpu004": "2c5eab0300000202", "stor01": "2c5eab0300000203"}},
		{"token auth, cluster hosts only", func(c *Config) {
			c.Auth, c.Token, c.Username, c.Password, c.Nodes = AuthToken, testToken, "", "", "gpu[001-004]"
		}, nil, []string{"gpu001", "gpu002", "gpu003", "gpu004"}, 3,
			map[string]string{"gpu002": "2c5eab0300000201", "gpu003": "2c5eab0300000202"}},
		{"names as switch IDs, a subset and a stranger", func(c *Config) { c.SwitchIDs = SwitchIDsName },
			[]string{"gpu003", "stranger"}, []string{"gpu003", "stranger"}, 2,
			map[string]string{"gpu003": "leaf-02", "stranger": ""}},
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
			var names []string
			for _, n := range g.Nodes() {
				names = append(names, n.Name)
			}
			if !slices.Equal(names, tt.nodes) || len(g.Switches()) != tt.switches || len(g.Roots()) != 1 {
				t.Fatalf("nodes %v, %d switches, %d roots", names, len(g.Switches()), len(g.Roots()))
			}
			for n, leaf := range tt.leaves {
				if got := leafOf(g, n); got != leaf {
					t.Errorf("%s under %q, want %q", n, got, leaf)
				}
			}
		})
	}
}

func TestLinkSpeedsAndCollapse(t *testing.T) {
	t.Parallel()
	url, ca := newEmulator().start(t)
	cfg := baseConfig(url, ca)
	cfg.Nodes = "gpu[001-004]"
	g, err := discover(t, cfg, providers.Request{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := g.Roots()[0]
	if root.ID != "2c5eab0300000101" || root.DisplayName != "spine-01 (+1)" || len(root.Children) != 2 {
		t.Errorf("root = %+v", root)
	}
	for id, want := range map[string]uint32{"2c5eab0300000201": 400, "2c5eab0300000202": 200} {
		if s, _ := g.Switch(id); s == nil || s.LinkSpeedGbps != want {
			t.Errorf("switch %s = %+v, want uplink %d", id, s, want)
		}
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	e := newEmulator()
	e.failures = []failure{{status: 503}, {status: 429, retryAfter: "3"}, {status: 502}}
	url, ca := e.start(t)
	rec := &recorder{}
	if _, err := discover(t, baseConfig(url, ca), providers.Request{}, nil, rec); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{100 * time.Millisecond, 3 * time.Second, 400 * time.Millisecond}
	if !slices.Equal(rec.waits, want) || e.callCount() != 5 {
		t.Errorf("waits %v after %d calls, want %v after 5", rec.waits, e.callCount(), want)
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
		{"wrong password", func(e *emulator, c *Config) { e.echoAuth = true; c.Password = "wrong-" + testPass },
			providers.ErrAuth, "401 Unauthorized", 0},
		{"wrong token", func(e *emulator, c *Config) { e.echoAuth = true; c.Auth, c.Token = AuthToken, "bad-"+testToken },
			providers.ErrAuth, "/ufmRestV3/resources/systems", 0},
		{"server keeps failing", func(e *emulator, c *Config) {
			e.failures = []failure{{status: 503}, {status: 503}, {status: 503}}
			c.Retry.MaxAttempts = 3
		}, providers.ErrUnavailable, "503 Service Unavailable", 2},
		{"unknown GUID in a link", func(e *emulator, _ *Config) {
			e.links = append(e.links, Link{SourceGUID: "dead", SourcePort: "1", DestinationGUID: "2c5eab0300000101", DestinationPort: "7"})
		}, ErrInconsistent, "link dead[1] - 2c5eab0300000101[7] names a GUID that is no UFM system", 0},
		{"certificate not trusted (no caFile)", func(_ *emulator, c *Config) { c.CAFile = "" },
			providers.ErrUnavailable, "certificate signed by unknown authority", 0},
		{"no fabric", func(e *emulator, _ *Config) { e.links = nil }, nil, "no host (type host) of the cluster is linked to a switch", 0},
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
			cred := base64.StdEncoding.EncodeToString([]byte(cfg.Username + ":" + cfg.Password))
			for _, secret := range []string{cfg.Password, testPass, cfg.Token, cred} {
				if secret == "" {
					continue
				}
				if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
					t.Errorf("secret %q leaked: %v\n%s", secret, err, logs.String())
				}
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		cfg := baseConfig("https://127.0.0.1:1", "")
		cfg.Retry.MaxAttempts = 2
		_, err := discover(t, cfg, providers.Request{}, nil, nil)
		if !errors.Is(err, providers.ErrUnavailable) || !strings.Contains(err.Error(), "GET https://127.0.0.1:1/ufmRest/resources/systems") {
			t.Fatalf("Discover() = %v", err)
		}
	})
}

func TestInsecureSkipVerifyWarns(t *testing.T) {
	t.Parallel()
	url, _ := newEmulator().start(t)
	cfg := baseConfig(url, "")
	cfg.InsecureSkipVerify = true
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	if _, err := discover(t, cfg, providers.Request{}, log, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "verification is OFF") {
		t.Errorf("no warning: %s", logs.String())
	}
}

func TestSecretFiles(t *testing.T) {
	t.Parallel()
	e := newEmulator()
	url, ca := e.start(t)
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(testPass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(url, ca)
	cfg.Password, cfg.PasswordFile = "", pw
	if _, err := discover(t, cfg, providers.Request{}, nil, nil); err != nil {
		t.Fatal(err)
	}
	cfg.PasswordFile = filepath.Join(dir, "missing")
	if _, err := New(cfg, providers.Deps{}); err == nil || !strings.Contains(err.Error(), "passwordFile") {
		t.Errorf("missing password file: %v", err)
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
		{"plain http", func(c *Config) { c.URL = "http://ufm" }, "url"},
		{"plain http allowed", func(c *Config) { c.URL, c.AllowHTTP = "http://ufm", true }, ""},
		{"credentials in the url", func(c *Config) { c.URL = "https://u:p@ufm" }, "url"},
		{"no username", func(c *Config) { c.Username = "" }, "username"},
		{"no password", func(c *Config) { c.Password = "" }, "password"},
		{"password twice", func(c *Config) { c.PasswordFile = "/x" }, "password"},
		{"token missing", func(c *Config) { c.Auth = AuthToken }, "token"},
		{"auth", func(c *Config) { c.Auth = "kerberos" }, "auth"},
		{"nodes", func(c *Config) { c.Nodes = "a[" }, "nodes"},
		{"retry", func(c *Config) { c.Retry.MaxAttempts = 99 }, "retry.maxAttempts"},
		{"switch IDs", func(c *Config) { c.SwitchIDs = "x" }, "switchIDs"},
		{"snapshot needs no server", func(c *Config) { c.URL, c.Username, c.Password, c.Snapshot = "", "", "", &Snapshot{} }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := baseConfig("https://ufm.example", "")
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
		t.Errorf("example graph: %d nodes, %d switches", len(g.Nodes()), len(g.Switches()))
	}
	if err := yaml.Unmarshal([]byte("url: https://ufm\nusername: u\npassword: p\nsnapshot: {systems: [{bogus: 1}]}\n"), &n); err != nil {
		t.Fatal(err)
	}
	if _, err := f.New(n.Content[0], "params", providers.Deps{}); !errors.Is(err, config.ErrInvalid) ||
		!strings.Contains(err.Error(), "params.snapshot.systems[0].bogus") {
		t.Errorf("unknown snapshot key: %v", err)
	}
}
