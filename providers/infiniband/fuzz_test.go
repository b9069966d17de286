package infiniband

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics and that whatever it accepts
// survives a round trip through the ibnetdiscover format unchanged.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.out")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(exampleOutput))
	f.Add([]byte("Switch\t8 \"S-0000000000000001\"\t\t# \"x\" base port 0 lid 1 lmc 0\n[1]\t\"S-0000000000000001\"[2]\t\t# \"x\" lid 1 4xSDR\n[2]\t\"S-0000000000000001\"[1]\t\t# \"x\" lid 1 4xSDR\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		topo, err := Parse(bytes.NewReader(data), "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz") {
				t.Fatalf("error does not name its source: %v", err)
			}
			return
		}
		again, err := Parse(bytes.NewReader(format(topo)), "formatted")
		if err != nil {
			t.Fatalf("formatted output does not parse: %v\n%s", err, format(topo))
		}
		if !reflect.DeepEqual(stripLines(topo), stripLines(again)) {
			t.Fatalf("round trip changed the topology:\n%+v\n%+v", topo.Nodes, again.Nodes)
		}
	})
}

// stripLines returns the nodes without their line numbers.
func stripLines(t *Topology) []Node {
	out := make([]Node, len(t.Nodes))
	for i, n := range t.Nodes {
		n.Line = 0
		n.Links = append([]Link(nil), n.Links...)
		for j := range n.Links {
			n.Links[j].Line = 0
		}
		out[i] = n
	}
	return out
}
