package sim

import (
	"context"
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg     Config
		wantErr bool
	}{
		{DefaultConfig(), false},
		{Config{Model: "/some/file.yaml"}, false},
		{Config{}, true},
		{Config{Model: "  "}, true},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.Model, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate() = %v, want error %v", err, tt.wantErr)
			}
			var fe *config.FieldError
			if err != nil && (!errors.As(err, &fe) || fe.Field != "model") {
				t.Errorf("error %v is not a FieldError for model", err)
			}
		})
	}
	if DefaultConfig().Model != "small-tree" {
		t.Errorf("default model = %q", DefaultConfig().Model)
	}
}

func TestNewAndDiscover(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		nodes   int
		wantErr string
	}{
		{"default", DefaultConfig(), 16, ""},
		{"nvl72", Config{Model: "nvl72"}, 144, ""},
		{"empty", Config{}, 0, "model: is required"},
		{"missing", Config{Model: "nope"}, 0, "sim: model \"nope\" is neither a bundled model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := New(tt.cfg, providers.Deps{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g, err := p.Discover(context.Background(), providers.Request{})
			if err != nil || len(g.Nodes()) != tt.nodes {
				t.Fatalf("Discover = %v, %v; want %d nodes", g, err, tt.nodes)
			}
			if p.Model().Info().Name != tt.cfg.Model {
				t.Errorf("Model() = %+v", p.Model().Info())
			}
		})
	}
}

func TestDiscoverCancelled(t *testing.T) {
	t.Parallel()
	big, err := Generate(GenerateOptions{Nodes: 20000})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(big, "big")
	if err != nil {
		t.Fatal(err)
	}
	p := newProvider(m, providers.Deps{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, req := range []providers.Request{{}, {Nodes: []providers.NodeRef{{Name: "gpu00001"}}}} {
		if _, err := p.Discover(ctx, req); !errors.Is(err, context.Canceled) {
			t.Errorf("Discover with a cancelled context = %v, want context.Canceled", err)
		}
		// The graph builder checks the context itself too.
		if _, err := m.graph(ctx, req); !errors.Is(err, context.Canceled) {
			t.Errorf("graph with a cancelled context = %v, want context.Canceled", err)
		}
	}
}

func TestFactory(t *testing.T) {
	t.Parallel()
	f := NewFactory()
	if f.Name != "sim" || f.Summary == "" || f.Example == "" {
		t.Fatalf("factory = %+v", f)
	}
	tests := []struct {
		name    string
		params  string // YAML; "" for no params
		nodes   int
		wantErr []string
	}{
		{name: "example", params: f.Example, nodes: 16},
		{name: "no params", nodes: 16},
		{name: "fat tree", params: "model: fat-tree-512\n", nodes: 512},
		{name: "unknown key", params: "model: nvl72\nbogus: x\n", wantErr: []string{"providers[0].params.bogus (line 2): unknown key"}},
		{name: "empty model", params: "model: ''\n", wantErr: []string{"providers[0].params.model (line 1): is required"}},
		{name: "missing model", params: "\nmodel: nope\n", wantErr: []string{"providers[0].params.model (line 2):", "neither a bundled model"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var params *yaml.Node
			if tt.params != "" {
				var doc yaml.Node
				if err := yaml.Unmarshal([]byte(tt.params), &doc); err != nil {
					t.Fatal(err)
				}
				params = doc.Content[0]
			}
			p, err := f.New(params, "providers[0].params", providers.Deps{})
			if tt.wantErr != nil {
				if err == nil {
					t.Fatal("New succeeded")
				}
				if p != nil {
					t.Errorf("New returned a provider (%v) with an error", p)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				if !errors.Is(err, config.ErrInvalid) {
					t.Errorf("error %v is not config.ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g, err := p.Discover(context.Background(), providers.Request{})
			if err != nil || len(g.Nodes()) != tt.nodes {
				t.Fatalf("Discover = %v, %v; want %d nodes", g, err, tt.nodes)
			}
		})
	}
}
