package aws_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/aws"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/testenv/cloudsim"
	"github.com/toposcope/toposcope/topology"
)

const (
	testKeyID  = "AKIATESTKEYID0001"
	testSecret = "s3cr3t/Very+Secret-value"
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

func creds() providers.Credentials {
	return providers.NewCredentials(map[string]string{aws.CredAccessKeyID: testKeyID, aws.CredSecretAccessKey: testSecret})
}

func newProvider(t testing.TB, url string, log *slog.Logger, names map[string]string, mut func(*aws.Config)) *aws.Provider {
	t.Helper()
	cfg := aws.DefaultConfig()
	cfg.Region, cfg.Endpoint, cfg.PageSize, cfg.Nodes = "us-west-2", url, 5, names
	cfg.Retry = httpretry.Policy{MaxAttempts: 5, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}
	if mut != nil {
		mut(&cfg)
	}
	p, err := aws.New(cfg, providers.Deps{Logger: log}, aws.WithGetenv(func(string) string { return "" }), aws.WithChain(nil))
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
		wantErr   error
		unplaced  []string
		maxCalls  int
		attempts1 bool
	}{
		{name: "paged region", model: "small-tree", maxCalls: 4},
		{name: "by instance ID", model: "nvl72", byID: true},
		{name: "domains paged", model: "nvl72"},
		{name: "throttled then fine", model: "small-tree", faults: cloudsim.Faults{Throttle: 3}},
		{name: "empty final page", model: "small-tree", faults: cloudsim.Faults{EmptyFinalPage: true}},
		{name: "slow page", model: "small-tree", faults: cloudsim.Faults{SlowPage: 2, SlowDelay: 20 * time.Millisecond}},
		{name: "server error fails", model: "small-tree", faults: cloudsim.Faults{ServerErrorPage: 2}, wantErr: providers.ErrUnavailable},
		{name: "throttled too long", model: "small-tree", faults: cloudsim.Faults{Throttle: 100}, wantErr: providers.ErrUnavailable},
		{name: "repeated token", model: "small-tree", faults: cloudsim.Faults{RepeatToken: true}, wantErr: aws.ErrRepeatedToken},
		{name: "missing topology and omitted", model: "small-tree", byID: true,
			faults: cloudsim.Faults{NoTopology: []string{"i-0sim003"}, Omit: []string{"i-0sim010"}}, unplaced: []string{"gpu003", "gpu010"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := model(t, tt.model)
			emu := cloudsim.NewAWS(cloudsim.FromGraph(want), tt.faults)
			srv := httptest.NewServer(emu)
			defer srv.Close()
			var logs bytes.Buffer
			p := newProvider(t, srv.URL, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), cloudsim.InstanceNames(want), nil)
			req := providers.Request{Credentials: creds()}
			if tt.byID {
				req.Nodes = refs(want)
			}
			g, err := p.Discover(context.Background(), req)
			out := logs.String()
			if err != nil {
				out += err.Error()
			}
			if g != nil {
				js, _ := json.Marshal(g)
				out += string(js)
			}
			for _, s := range []string{testKeyID, testSecret} {
				if strings.Contains(out, s) {
					t.Fatalf("secret leaked: %s", out)
				}
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
				if !strings.Contains(out, "omitted=1") || !strings.Contains(out, "gpu010") {
					t.Errorf("unplaced not reported: %s", out)
				}
				return
			}
			cloudsim.SameTopology(t, g, want)
			if tt.maxCalls > 0 && emu.Calls() > tt.maxCalls {
				t.Errorf("%d calls, want at most %d", emu.Calls(), tt.maxCalls)
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		creds   providers.Credentials
		env     map[string]string
		wantErr string
	}{
		{name: "none", wantErr: "AWS_ACCESS_KEY_ID"},
		{name: "request lacks secret", creds: providers.NewCredentials(map[string]string{aws.CredAccessKeyID: testKeyID}), wantErr: aws.CredSecretAccessKey},
		{name: "request", creds: creds()},
		{name: "environment", env: map[string]string{"AWS_ACCESS_KEY_ID": testKeyID, "AWS_SECRET_ACCESS_KEY": testSecret}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := model(t, "small-tree")
			srv := httptest.NewServer(cloudsim.NewAWS(cloudsim.FromGraph(want), cloudsim.Faults{}))
			defer srv.Close()
			cfg := aws.DefaultConfig()
			cfg.Region, cfg.Endpoint = "us-west-2", srv.URL
			p, err := aws.New(cfg, providers.Deps{}, aws.WithGetenv(func(k string) string { return tt.env[k] }), aws.WithChain(nil))
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Discover(context.Background(), providers.Request{Credentials: tt.creds})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, providers.ErrNoCredentials) || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), testKeyID) {
				t.Fatalf("err = %v, want ErrNoCredentials naming %s", err, tt.wantErr)
			}
		})
	}
}

func TestCredentialsFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, wantErr string
	}{
		{"ok", "[default]\naws_access_key_id = " + testKeyID + "\naws_secret_access_key = " + testSecret + "\n", ""},
		{"no profile", "[other]\naws_access_key_id = x\n", "no profile [default]"},
		{"no secret", "[default]\naws_access_key_id = " + testKeyID + "\n", "lacks aws_secret_access_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := t.TempDir() + "/credentials"
			if err := writeFile(path, tt.body); err != nil {
				t.Fatal(err)
			}
			cfg := aws.DefaultConfig()
			cfg.Region, cfg.CredentialsFile = "us-west-2", path
			_, err := aws.New(cfg, providers.Deps{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), testKeyID) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestFactoryExampleAndValidation(t *testing.T) {
	t.Parallel()
	f := aws.NewFactory()
	tests := []struct {
		name, params, wantErr string
	}{
		{"example", f.Example, ""},
		{"bad page size", "region: r\npageSize: 500", "params.pageSize"},
		{"bad endpoint", "region: r\nendpoint: ftp://x", "params.endpoint"},
		{"bad retry", "region: r\nretry: {maxAttempts: 99}", "params.retry.maxAttempts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := f.New(yamlNode(t, tt.params), "params", providers.Deps{})
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
			if len(g.Nodes()) != 3 || len(g.Domains()) != 1 || cloudsim.PathIDs(g.Path("i-0example000001")) != "nn-leaf1>nn-spine1>nn-core1" {
				t.Fatalf("example graph: %d nodes, %d domains, path %s", len(g.Nodes()), len(g.Domains()), cloudsim.PathIDs(g.Path("i-0example000001")))
			}
		})
	}
}

func TestParseProviderID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"aws:///us-west-2a/i-123": "i-123", "i-9": "i-9", "aws:///i-7": "i-7"} {
		if got := aws.ParseProviderID(in); got != want {
			t.Errorf("ParseProviderID(%q) = %q, want %q", in, got, want)
		}
	}
	_ = fmt.Sprint
}

func TestByIDChunksOf100(t *testing.T) {
	t.Parallel()
	want, err := sim.GenerateGraph(sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: 250})
	if err != nil {
		t.Fatal(err)
	}
	instances := cloudsim.FromGraph(want)
	emu := cloudsim.NewAWS(instances, cloudsim.Faults{})
	srv := httptest.NewServer(emu)
	defer srv.Close()
	p := newProvider(t, srv.URL, nil, nil, nil)
	req := providers.Request{Credentials: creds()}
	for _, in := range instances {
		req.Nodes = append(req.Nodes, providers.NodeRef{Name: in.Name, InstanceID: in.ID})
	}
	g, err := p.Discover(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	cloudsim.SameTopology(t, g, want)
	if emu.Calls() != 3 { // the emulator rejects more than 100 IDs per call
		t.Errorf("%d calls, want 3", emu.Calls())
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
