package instances_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/instances"
	"github.com/toposcope/toposcope/topology"
)

func graph(t *testing.T) *topology.Graph {
	t.Helper()
	b := topology.NewBuilder()
	b.AddNode(topology.Node{Name: "n2", InstanceID: "i-2", Region: "r1", Zone: "z1"})
	b.AddNode(topology.Node{Name: "n1", InstanceID: "i-1", Region: "r1"})
	b.AddNode(topology.Node{Name: "cpu"})
	b.AddPath("n1", []topology.SwitchInfo{{ID: "leaf1"}, {ID: "spine"}})
	b.AddPath("n2", []topology.SwitchInfo{{ID: "leaf2"}, {ID: "spine"}})
	b.AddToDomain("n1", "nvl1", "rack1")
	b.AddToDomain("n2", "nvl1", "")
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRender: every node, in order of ID, its path closest first, its
// labels; a node under no switch has empty layers and no labels; the
// same graph gives the same bytes; domainLabels false leaves the domain
// out.
func TestRender(t *testing.T) {
	t.Parallel()
	off := false
	tests := []struct {
		name string
		cfg  instances.Config
		want string
	}{
		{"default", instances.Config{}, `{"instances":[` +
			`{"id":"cpu","network_layers":[]},` +
			`{"id":"i-1","network_layers":["leaf1","spine"],"labels":{"accelerator.topograph.run/domain":"nvl1","accelerator.topograph.run/sub-domain":"rack1","topology.kubernetes.io/region":"r1"}},` +
			`{"id":"i-2","network_layers":["leaf2","spine"],"labels":{"accelerator.topograph.run/domain":"nvl1","topology.kubernetes.io/region":"r1","topology.kubernetes.io/zone":"z1"}}]}`},
		{"no domain labels", instances.Config{DomainLabels: &off}, `{"instances":[` +
			`{"id":"cpu","network_layers":[]},` +
			`{"id":"i-1","network_layers":["leaf1","spine"],"labels":{"topology.kubernetes.io/region":"r1"}},` +
			`{"id":"i-2","network_layers":["leaf2","spine"],"labels":{"topology.kubernetes.io/region":"r1","topology.kubernetes.io/zone":"z1"}}]}`},
	}
	for _, tt := range tests {
		e, err := instances.New(tt.cfg, engines.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Render(context.Background(), graph(t))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// TestPublish writes the file, or standard output without one.
func TestPublish(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "topology.json")
	var stdout bytes.Buffer
	for _, cfg := range []instances.Config{{Output: out}, {}} {
		e, err := instances.New(cfg, engines.Deps{Stdout: &stdout})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Publish(context.Background(), graph(t)); err != nil {
			t.Fatal(err)
		}
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, stdout.Bytes()) || !bytes.HasPrefix(file, []byte(`{"instances":[`)) {
		t.Errorf("file %s, stdout %s", file, stdout.Bytes())
	}
}
