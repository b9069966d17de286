package server

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/topology"
)

// TestDocumentKeptExactly checks that a kept document is the graph's
// encoding, held in a slice of exactly its length (a buffer grown by
// doubling would keep up to twice the document while the graph is
// current), and that a second request gets the same bytes without a new
// encoding.
func TestDocumentKeptExactly(t *testing.T) {
	t.Parallel()
	g, err := sim.GenerateGraph(sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: 3000, DomainSize: 18})
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range []string{variantJSON, variantDOTNodes, variantDOT} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			d := &derived{graph: g, docs: map[string][]byte{}}
			doc, err := d.Document(variant)
			if err != nil {
				t.Fatal(err)
			}
			if len(doc) == 0 || cap(doc) != len(doc) {
				t.Fatalf("document of %d bytes kept in a slice of capacity %d", len(doc), cap(doc))
			}
			again, err := d.Document(variant)
			if err != nil {
				t.Fatal(err)
			}
			if &again[0] != &doc[0] {
				t.Fatal("the second request encoded the document again")
			}
			if variant != variantJSON {
				return
			}
			var back topology.Graph
			if err := json.Unmarshal(doc, &back); err != nil {
				t.Fatalf("kept JSON does not decode: %v", err)
			}
			want, err := json.Marshal(g)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(&back)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatal("kept JSON decodes to another graph")
			}
		})
	}
}
