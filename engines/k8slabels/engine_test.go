package k8slabels_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/k8slabels"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/config"
	goldenfile "github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got, *update)
}

func params(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	if n.Kind == yaml.DocumentNode {
		return n.Content[0]
	}
	return &n
}

// oddGraph has an unsafe and an over-long switch ID and uneven depth.
func oddGraph(t *testing.T) *topology.Graph {
	t.Helper()
	b := topology.NewBuilder()
	long := "spine-" + strings.Repeat("0123456789", 8)
	for _, n := range []string{"gpu001", "gpu002", "gpu003", "gpu004"} {
		b.AddNode(topology.Node{Name: n, GPUs: 8})
	}
	b.AddPath("gpu001", []topology.SwitchInfo{{ID: "MF0;sw-01:MQM9700/U1"}, {ID: long}, {ID: "core"}})
	b.AddPath("gpu002", []topology.SwitchInfo{{ID: "MF0;sw-01:MQM9700/U1"}, {ID: long}, {ID: "core"}})
	b.AddPath("gpu003", []topology.SwitchInfo{{ID: "leaf2"}, {ID: "core"}})
	b.AddToDomain("gpu001", "7b968a6d-c8aa-45e1-9e07-e1e51be99c31.1", "rack/1")
	b.AddToDomain("gpu002", "7b968a6d-c8aa-45e1-9e07-e1e51be99c31.1", "rack/1")
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestRender(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, params string }{
		{"toposcope", "mode: print\n"},
		{"topograph-v1", "mode: print\npreset: topograph-v1\n"},
		{"custom", "mode: print\ntierLabels: [example.com/leaf, example.com/spine]\ndomainLabel: example.com/nvl\nsubDomainLabel: '-'\nfillTiers: false\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			e, err := k8slabels.NewFactory().New(params(t, tt.params), "params", engines.Deps{Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			g := oddGraph(t)
			if err := e.Publish(context.Background(), g); err != nil {
				t.Fatal(err)
			}
			doc, err := e.(engines.Renderer).Render(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(doc, out.Bytes()) {
				t.Error("Publish in print mode differs from Render")
			}
			golden(t, "render-"+tt.name+".yaml", doc)
		})
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, params, field string
	}{
		{"unknown key", "nope: 1", "params.nope"},
		{"bad mode", "mode: later", "params.mode"},
		{"bad preset", "mode: print\npreset: topograph-v0", "params.preset"},
		{"bad selector", "mode: print\nnodeSelector: '!!'", "params.nodeSelector"},
		{"bad qps", "mode: print\nqps: 0", "params.qps"},
		{"bad concurrency", "mode: print\nconcurrency: 0", "params.concurrency"},
		{"bad tier key", "mode: print\ntierLabels: ['-x']", "params.tierLabels[0]"},
		{"missing kubeconfig", "kubeconfig: /nonexistent/kubeconfig", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := k8slabels.NewFactory().New(params(t, tt.params), "params", engines.Deps{})
			if err == nil {
				t.Fatal("New succeeded")
			}
			if tt.field == "" {
				return
			}
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field || !errors.Is(err, config.ErrInvalid) {
				t.Errorf("New = %v, want a field error on %s", err, tt.field)
			}
		})
	}
	if _, err := k8slabels.New(k8slabels.DefaultConfig(), nil, engines.Deps{}); err == nil {
		t.Error("mode apply without a client succeeded")
	}
}

func TestCoverage(t *testing.T) {
	t.Parallel()
	cfg := k8slabels.DefaultConfig()
	cfg.Mode = kube.ModePrint
	e, err := k8slabels.New(cfg, nil, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if c := e.Coverage(oddGraph(t)); strings.Join(c.Uncovered, ",") != "gpu004" {
		t.Errorf("Coverage = %+v", c)
	}
	g, err := kubetest.Fabric{Prefix: "f", Nodes: 32}.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if c := e.Coverage(g); len(c.Uncovered) != 0 {
		t.Errorf("Coverage of a full fabric = %+v", c)
	}
}
