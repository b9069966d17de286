package oci_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/oci"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/testenv/cloudsim"
	"github.com/toposcope/toposcope/topology"
)

const (
	tenancy     = "ocid1.tenancy.oc1..simtenancy"
	fingerprint = "20:3b:97:13:55:1c:5b:0d:d3:37:d8:50:4e:c5:3a:34"
)

// privateKey returns a fresh PEM RSA key: the SDK signs every request.
func privateKey(t testing.TB) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

func creds(key string) providers.Credentials {
	return providers.NewCredentials(map[string]string{oci.CredTenancy: tenancy, oci.CredUser: "ocid1.user.oc1..sim",
		oci.CredFingerprint: fingerprint, oci.CredPrivateKey: key})
}

func model(t testing.TB, name string) *topology.Graph {
	t.Helper()
	g, err := sim.LoadGraph(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func newProvider(t testing.TB, url string, log *slog.Logger, mut func(*oci.Config)) *oci.Provider {
	t.Helper()
	cfg := oci.DefaultConfig()
	cfg.Region, cfg.Endpoint, cfg.PageSize = "us-ashburn-1", url, 7
	cfg.Retry = httpretry.Policy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}
	if mut != nil {
		mut(&cfg)
	}
	p, err := oci.New(cfg, providers.Deps{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// racked gives every instance with a domain a rack, so that the racks
// come from GetComputeHost.
func racked(in []cloudsim.Instance) []cloudsim.Instance {
	for i := range in {
		if in[i].Domain != "" {
			in[i].SubDomain = "R-" + in[i].Domain
		}
	}
	return in
}

func TestDiscoverAgainstEmulator(t *testing.T) {
	t.Parallel()
	key := privateKey(t)
	tests := []struct {
		name      string
		model     string
		cfg       func(*oci.Config)
		faults    cloudsim.Faults
		wantErr   error
		unplaced  []string
		wantCalls int
	}{
		// 1 ListAvailabilityDomains + ceil(144/7)=21 pages + 144 GetComputeHost.
		{name: "nvl72 with racks", model: "nvl72", wantCalls: 1 + 21 + 144},
		{name: "no racks", model: "nvl72", cfg: func(c *oci.Config) { c.Racks = new(bool) }, wantCalls: 1 + 21},
		{name: "configured domains", model: "fat-tree-512", cfg: func(c *oci.Config) {
			c.AvailabilityDomains, c.PageSize = []string{"sim-east-1a"}, 100
		}, wantCalls: 6},
		{name: "throttled then fine", model: "nvl72", faults: cloudsim.Faults{Throttle: 2}, wantCalls: 2 + 1 + 21 + 144},
		{name: "empty final page", model: "nvl72", cfg: func(c *oci.Config) { c.PageSize = 72 }, faults: cloudsim.Faults{EmptyFinalPage: true}, wantCalls: 1 + 3 + 144},
		{name: "server error fails", model: "nvl72", faults: cloudsim.Faults{ServerErrorPage: 2}, wantErr: providers.ErrUnavailable},
		{name: "throttled too long", model: "nvl72", faults: cloudsim.Faults{Throttle: 50}, wantErr: providers.ErrUnavailable},
		{name: "repeated token", model: "nvl72", faults: cloudsim.Faults{RepeatToken: true}, wantErr: oci.ErrRepeatedToken},
		{name: "wrong tenancy", model: "nvl72", cfg: func(c *oci.Config) { c.Tenancy = "ocid1.tenancy.oc1..other" }, wantErr: providers.ErrAuth},
		{name: "two tiers are not enough", model: "small-tree", unplaced: []string{"gpu[001-016]"}},
		{name: "missing topology and omitted", model: "nvl72",
			faults: cloudsim.Faults{NoTopology: []string{"gb003"}, Omit: []string{"gb010"}}, unplaced: []string{"gb003", "gb010"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := model(t, tt.model)
			emu := cloudsim.NewOCI(tenancy, racked(cloudsim.FromGraph(want)), tt.faults)
			srv := httptest.NewServer(emu)
			defer srv.Close()
			var logs bytes.Buffer
			p := newProvider(t, srv.URL, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), tt.cfg)
			req := providers.Request{Credentials: creds(key)}
			for _, n := range want.Nodes() {
				req.Nodes = append(req.Nodes, providers.NodeRef{Name: n.Name, InstanceID: cmp.Or(n.InstanceID, n.Name)})
			}
			g, err := p.Discover(context.Background(), req)
			out := logs.String()
			if err != nil {
				out += err.Error()
			}
			js, _ := json.Marshal(g)
			if strings.Contains(out+string(js), "PRIVATE KEY") || strings.Contains(out+string(js), key[40:80]) {
				t.Fatalf("private key leaked: %s", out)
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
				got := g.Unplaced()
				if len(tt.unplaced) == 1 && strings.Contains(tt.unplaced[0], "[") {
					if len(got) != len(want.Nodes()) {
						t.Fatalf("unplaced %d of %d, want all", len(got), len(want.Nodes()))
					}
					return
				}
				if !slices.Equal(got, tt.unplaced) || !strings.Contains(out, "gb010") {
					t.Fatalf("unplaced = %v, want %v; log %s", got, tt.unplaced, out)
				}
				return
			}
			if len(g.Nodes()) != len(want.Nodes()) {
				t.Fatalf("%d nodes, want %d", len(g.Nodes()), len(want.Nodes()))
			}
			noRacks := tt.cfg != nil && strings.Contains(tt.name, "no racks")
			for _, n := range want.Nodes() {
				got, ok := g.Node(n.Name)
				wantSub := "R-" + n.Domain
				if n.Domain == "" || noRacks {
					wantSub = ""
				}
				if !ok || cloudsim.PathIDs(g.Path(n.Name)) != cloudsim.PathIDs(want.Path(n.Name)) || got.Domain != n.Domain || got.SubDomain != wantSub ||
					got.Zone != n.Zone || got.Region != "us-ashburn-1" {
					t.Fatalf("node %s differs from the model: %+v path %s", n.Name, got, cloudsim.PathIDs(g.Path(n.Name)))
				}
			}
			if emu.Calls() != tt.wantCalls {
				t.Errorf("%d API calls, want %d", emu.Calls(), tt.wantCalls)
			}
		})
	}
}

// TestConfigFile authenticates with an OCI CLI configuration file, whose
// tenancy is the one listed.
func TestConfigFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(keyFile, []byte(privateKey(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "config")
	text := "[DEFAULT]\nuser=ocid1.user.oc1..x\nfingerprint=" + fingerprint + "\ntenancy=ocid1.tenancy.oc1..wrong\nregion=us-ashburn-1\nkey_file=" + keyFile +
		"\n\n[SIM]\nuser=ocid1.user.oc1..sim\nfingerprint=" + fingerprint + "\ntenancy=" + tenancy + "\nregion=us-ashburn-1\nkey_file=" + keyFile + "\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	want := model(t, "nvl72")
	srv := httptest.NewServer(cloudsim.NewOCI(tenancy, cloudsim.FromGraph(want), cloudsim.Faults{}))
	defer srv.Close()
	p := newProvider(t, srv.URL, slog.New(slog.DiscardHandler), func(c *oci.Config) {
		c.Region, c.ConfigFile, c.Profile, c.Nodes = "", conf, "SIM", map[string]string{"gb001": "gb001"}
	})
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes()) != 144 || cloudsim.PathIDs(g.Path("gb001")) != cloudsim.PathIDs(want.Path("gb001")) {
		t.Fatalf("%d nodes; gb001 path %s", len(g.Nodes()), cloudsim.PathIDs(g.Path("gb001")))
	}
	p = newProvider(t, srv.URL, slog.New(slog.DiscardHandler), func(c *oci.Config) { c.ConfigFile = conf })
	if _, err := p.Discover(context.Background(), providers.Request{}); !errors.Is(err, providers.ErrAuth) {
		t.Fatalf("DEFAULT profile (another tenancy): err = %v, want ErrAuth", err)
	}
}

func TestFactory(t *testing.T) {
	t.Parallel()
	f := oci.NewFactory()
	tests := []struct{ name, params, wantErr string }{
		{"example", f.Example, ""},
		{"page size", "pageSize: 1001", "params.pageSize"},
		{"missing config file", "configFile: /nonexistent/oci/config", "params.configFile"},
		{"profile alone", "profile: SIM", "params.profile"},
		{"domain", "domain: rack", "params.domain"},
		{"endpoint path", "endpoint: https://iaas.example/20160918", "params.endpoint"},
		{"retry", "retry: {maxAttempts: -1}", "params.retry.maxAttempts"},
		{"snapshot without instance", "snapshot: [{name: a}]", "params.snapshot[0].instanceId"},
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
			if err != nil || len(g.Nodes()) != 3 || len(g.Domains()) != 2 || cloudsim.PathIDs(g.Path("gb01")) != "lb-1>nb-1>island-1" {
				t.Fatalf("example: %v", err)
			}
			if n, _ := g.Node("gb01"); n.SubDomain != "R12" {
				t.Fatalf("example rack: %+v", n)
			}
		})
	}
}

func TestRequestCredentialsNamed(t *testing.T) {
	t.Parallel()
	const secret = "not-a-real-key-SECRET-5f1c"
	p := newProvider(t, "http://127.0.0.1:1", nil, nil)
	_, err := p.Discover(context.Background(), providers.Request{Credentials: providers.NewCredentials(map[string]string{oci.CredPrivateKey: secret})})
	if !errors.Is(err, providers.ErrNoCredentials) || !strings.Contains(err.Error(), oci.CredFingerprint) || strings.Contains(err.Error(), secret) {
		t.Fatalf("err = %v", err)
	}
	p = newProvider(t, "http://127.0.0.1:1", nil, func(c *oci.Config) { c.Region = "" })
	if _, err := p.Discover(context.Background(), providers.Request{Credentials: creds(secret)}); err == nil ||
		!strings.Contains(err.Error(), "region") || strings.Contains(err.Error(), secret) {
		t.Fatalf("no region: err = %v", err)
	}
	// A malformed key fails before any call, without quoting it.
	if _, err := newProvider(t, "http://127.0.0.1:1", nil, nil).Discover(context.Background(), providers.Request{Credentials: creds(secret)}); err == nil ||
		strings.Contains(err.Error(), secret) {
		t.Fatalf("bad key: err = %v", err)
	}
}

// BenchmarkDiscover10k pages 10,000 hosts (1,000 per page) through the
// emulator with the real SDK client, without and with the racks
// (one GetComputeHost per host).
func BenchmarkDiscover10k(b *testing.B) {
	want, err := sim.GenerateGraph(sim.GenerateOptions{Shape: sim.ShapeNVL72, Nodes: 10_000})
	if err != nil {
		b.Fatal(err)
	}
	emu := cloudsim.NewOCI(tenancy, cloudsim.FromGraph(want), cloudsim.Faults{})
	srv := httptest.NewServer(emu)
	defer srv.Close()
	req := providers.Request{Credentials: creds(privateKey(b))}
	for _, racks := range []bool{false, true} {
		name := map[bool]string{false: "noRacks", true: "racks"}[racks]
		b.Run(name, func(b *testing.B) {
			p := newProvider(b, srv.URL, slog.New(slog.DiscardHandler), func(c *oci.Config) { c.PageSize = 1000; c.Racks = &racks })
			before := emu.Calls()
			for b.Loop() {
				g, err := p.Discover(context.Background(), req)
				if err != nil || len(g.Nodes()) != 10_000 {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(emu.Calls()-before)/float64(b.N), "calls/op")
		})
	}
}

// failingRacks is an API whose GetComputeHost fails for one host.
type failingRacks struct{ hosts []oci.Host }

func (f failingRacks) Tenancy() (string, error) { return tenancy, nil }
func (f failingRacks) AvailabilityDomains(context.Context, string) ([]string, error) {
	return []string{"ad-1"}, nil
}
func (f failingRacks) HostsPage(context.Context, string, string, int, string) ([]oci.Host, string, error) {
	return f.hosts, "", nil
}
func (f failingRacks) Rack(ctx context.Context, id string) (string, error) {
	if id == "h-57" {
		return "", errors.New("boom")
	}
	return "R1", ctx.Err()
}

func TestRackErrorStopsDiscovery(t *testing.T) {
	t.Parallel()
	var hosts []oci.Host
	for i := range 200 {
		id := strconv.Itoa(i)
		hosts = append(hosts, oci.Host{ID: "h-" + id, InstanceID: "i-" + id, LocalBlock: "l", NetworkBlock: "n", HPCIsland: "h", GPUMemoryFabric: "f"})
	}
	cfg := oci.DefaultConfig()
	cfg.RackConcurrency = 4
	p, err := oci.New(cfg, providers.Deps{}, oci.WithAPI(func(*oci.Credentials) (oci.API, error) { return failingRacks{hosts}, nil }))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Discover(context.Background(), providers.Request{})
	if !errors.Is(err, providers.ErrUnavailable) || !strings.Contains(err.Error(), "h-57") {
		t.Fatalf("err = %v, want the failing host named", err)
	}
	hosts[57].ID = "h-ok"
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil || len(g.Nodes()) != 200 || len(g.Domains()) != 1 {
		t.Fatalf("without the failure: %v", err)
	}
	if n, _ := g.Node("i-199"); n.SubDomain != "R1" {
		t.Fatalf("rack of i-199: %+v", n)
	}
}
