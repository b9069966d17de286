package topology

import (
	"encoding/json"
	"fmt"
)

// graphJSON is the wire form of a Graph.
type graphJSON struct {
	Nodes    []Node   `json:"nodes"`
	Switches []Switch `json:"switches"`
	Domains  []Domain `json:"domains"`
}

// topLevelArrayLens returns, for each key of the JSON object data whose
// value is an array, how many elements that array holds, in one pass.
// It only sizes slices before encoding/json fills them (encoding/json
// appends within a slice's capacity, and otherwise grows it by half again
// as it goes: three allocations and copies of a 100,000-node table).
// Malformed input gives wrong counts, never an error: encoding/json
// reports it.
func topLevelArrayLens(data []byte) map[string]int {
	lens := map[string]int{}
	depth, start, count := 0, 0, 0
	inString, escaped, nonEmpty := false, false, false
	key, current := "", ""
	for i, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if depth == 1 {
					key = string(data[start:i])
				}
			}
			continue
		}
		if depth >= 2 && !isJSONSpace(c) && (depth > 2 || (c != ',' && c != ']')) {
			nonEmpty = true // an element's first byte
		}
		switch c {
		case '"':
			inString, start = true, i+1
		case '[', '{':
			depth++
			if depth == 2 && c == '[' {
				current, count, nonEmpty = key, 0, false
			}
		case ']', '}':
			if depth == 2 && c == ']' {
				if nonEmpty {
					count++
				}
				lens[current] = count
			}
			depth--
		case ',':
			if depth == 2 {
				count++
			}
		}
	}
	return lens
}

// minItemJSON is the fewest bytes a node, switch or domain takes in
// MarshalJSON's form ({"name":"a","gpus":0}, {"id":"a","name":"a"}).
const minItemJSON = 20

// presize is the capacity to make for count elements counted in a
// document of size bytes: at most one per minItemJSON bytes, so that a
// document of tiny elements ([1,1,1,...]) never makes a table larger than
// a real graph of its size would, before encoding/json refuses it.
func presize(count, size int) int { return min(count, size/minItemJSON) }

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// jsonChunk is how many items MarshalJSON encodes in one call of
// encoding/json. encoding/json keeps the buffer each call grew in a pool
// for the next call: one call for a whole graph would leave a buffer of
// the graph's size there after it returned (25 MB at 100,000 nodes,
// counting the nested call).
const jsonChunk = 512

// MarshalJSON encodes the graph as {"nodes","switches","domains"}, each in
// the graph's deterministic order. The bytes are those of encoding/json
// for the same fields (compact, HTML-escaped), encoded a chunk of items at
// a time and joined into a result of exactly their size.
func (g *Graph) MarshalJSON() ([]byte, error) {
	parts := [][]byte{[]byte(`{"nodes":`)}
	var err error
	if parts, err = appendJSONList(parts, g.nodes); err != nil {
		return nil, err
	}
	parts = append(parts, []byte(`,"switches":`))
	if parts, err = appendJSONList(parts, g.switches); err != nil {
		return nil, err
	}
	parts = append(parts, []byte(`,"domains":`))
	if parts, err = appendJSONList(parts, g.domains); err != nil {
		return nil, err
	}
	parts = append(parts, []byte(`}`))
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	out := make([]byte, 0, size)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// appendJSONList appends the parts of items' JSON array (null for a nil
// slice, as encoding/json writes it) to parts.
func appendJSONList[T any](parts [][]byte, items []T) ([][]byte, error) {
	if items == nil {
		return append(parts, []byte("null")), nil
	}
	parts = append(parts, []byte("["))
	for i := 0; i < len(items); i += jsonChunk {
		b, err := json.Marshal(items[i:min(i+jsonChunk, len(items))])
		if err != nil {
			return nil, err
		}
		if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
			return nil, fmt.Errorf("topology: encoding a list gave %.20q", b)
		}
		if i > 0 {
			parts = append(parts, []byte(","))
		}
		parts = append(parts, b[1:len(b)-1])
	}
	return append(parts, []byte("]")), nil
}

// UnmarshalJSON decodes what MarshalJSON wrote and rebuilds (and so
// re-validates) the graph.
func (g *Graph) UnmarshalJSON(data []byte) error {
	lens := topLevelArrayLens(data)
	w := graphJSON{Nodes: make([]Node, 0, presize(lens["nodes"], len(data))),
		Switches: make([]Switch, 0, presize(lens["switches"], len(data))),
		Domains:  make([]Domain, 0, presize(lens["domains"], len(data)))}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	b := NewBuilder()
	// The Builder keeps its nodes in the decoded array (each is read
	// before its own or a later position is written) and takes their
	// decoded attribute maps; the domain and sub-domain IDs, decoded once
	// per node, are kept once per domain.
	b.nodes = w.Nodes[:0]
	ids := make(map[string]string)
	intern := func(s string) string {
		if v, ok := ids[s]; ok {
			return v
		}
		ids[s] = s
		return s
	}
	for i := range w.Nodes {
		n := w.Nodes[i]
		b.addNode(n, false)
		if n.Domain != "" {
			b.AddToDomain(n.Name, intern(n.Domain), intern(n.SubDomain))
		}
	}
	for _, s := range w.Switches {
		b.AddSwitch(SwitchInfo{ID: s.ID, DisplayName: s.DisplayName, LinkSpeedGbps: s.LinkSpeedGbps})
		for _, c := range s.Children {
			b.Link(s.ID, c)
		}
		for _, n := range s.Nodes {
			b.AttachNode(s.ID, n)
		}
	}
	built, err := b.Build()
	if err != nil {
		return err
	}
	*g = *built
	return nil
}
