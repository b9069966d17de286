package topology_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toposcope/toposcope/topology"
)

// wireGraph builds a graph of n nodes, 16 to a leaf, two leaves to a
// spine, 18 to an accelerator domain with two sub-domains, and names and
// attributes that encoding/json escapes.
func wireGraph(t *testing.T, n int) *topology.Graph {
	t.Helper()
	b := topology.NewBuilder()
	for i := range n {
		name := fmt.Sprintf("gpu%05d", i)
		b.AddNode(topology.Node{Name: name, InstanceID: fmt.Sprintf("i-%x", i), GPUs: 8,
			Attributes: map[string]string{"rack": "r<1>&\"x\"", "row": fmt.Sprint(i % 3)}})
		leaf, spine := fmt.Sprintf("leaf%d", i/16), fmt.Sprintf("spine%d", i/32)
		b.AddPath(name, []topology.SwitchInfo{{ID: leaf, LinkSpeedGbps: 400}, {ID: spine, DisplayName: "spine <" + spine + ">"}})
		b.AddToDomain(name, fmt.Sprintf("nvl%d", i/18), fmt.Sprintf("tray%d", i/9))
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestMarshalJSONBytes: the graph's JSON is byte for byte what
// encoding/json writes for the same fields in one call (which the stored
// snapshots' digests were taken of), across chunk boundaries, and what
// json.Marshal of the graph itself gives.
func TestMarshalJSONBytes(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 511, 512, 513, 1025, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			g := wireGraph(t, n)
			got, err := g.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(struct {
				Nodes    []topology.Node   `json:"nodes"`
				Switches []topology.Switch `json:"switches"`
				Domains  []topology.Domain `json:"domains"`
			}{g.Nodes(), g.Switches(), g.Domains()})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("MarshalJSON differs from encoding/json:\n got %.300s\nwant %.300s", got, want)
			}
			if cap(got) != len(got) {
				t.Errorf("result has capacity %d for %d bytes", cap(got), len(got))
			}
			outer, err := json.Marshal(g)
			if err != nil || !bytes.Equal(outer, got) {
				t.Errorf("json.Marshal(g) differs from g.MarshalJSON(): %v", err)
			}
			var back topology.Graph
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			again, _ := back.MarshalJSON()
			if !bytes.Equal(again, got) {
				t.Error("decoding and encoding again changed the graph")
			}
		})
	}
}

// BenchmarkMarshalJSON encodes a 100,000-node graph: "chunked" is
// MarshalJSON, "one call" what it did before (encoding/json on the whole
// graph, whose grown buffer then stays in encoding/json's pool).
func BenchmarkMarshalJSON(b *testing.B) {
	t := &testing.T{}
	g := wireGraph(t, 100000)
	wire := struct {
		Nodes    []topology.Node   `json:"nodes"`
		Switches []topology.Switch `json:"switches"`
		Domains  []topology.Domain `json:"domains"`
	}{g.Nodes(), g.Switches(), g.Domains()}
	b.Run("chunked", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("one call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(wire); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkUnmarshalJSON reads back a 100,000-node graph, as the service
// does with its current snapshot when it starts.
func BenchmarkUnmarshalJSON(b *testing.B) {
	data, err := wireGraph(&testing.T{}, 100000).MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var g topology.Graph
		if err := json.Unmarshal(data, &g); err != nil {
			b.Fatal(err)
		}
	}
}
