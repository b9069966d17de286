package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"sync"

	"github.com/toposcope/toposcope/topology"
	"github.com/toposcope/toposcope/topology/outline"
)

// Variants of the whole-graph document.
const (
	variantJSON       = "json"
	variantJSONPretty = "json-pretty"
	variantDOT        = "dot-switches"
	variantDOTNodes   = "dot-nodes"
)

// encodings holds the documents of one graph, each encoded the first
// time it is asked for: GET /v1/graph of an unchanged topology copies
// bytes instead of encoding 100,000 nodes again.
type encodings struct {
	graph *topology.Graph
	mu    sync.Mutex
	docs  map[string][]byte
}

// encoded returns the document variant of g. Documents of the current
// graph are kept until the graph changes; those of other graphs (stored
// snapshots) are encoded for the one request.
func (h *handlers) encoded(g *topology.Graph, current bool, variant string) ([]byte, error) {
	if variant == variantJSONPretty {
		// Indented on each request from the kept compact document: a
		// reading aid is not worth keeping a second, larger copy.
		compact, err := h.encoded(g, current, variantJSON)
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		out.Grow(len(compact) * 2)
		err = json.Indent(&out, compact, "", "  ")
		return out.Bytes(), err
	}
	if !current {
		return h.encode(g, variant)
	}
	e := h.encCache.Load()
	if e == nil || e.graph != g {
		fresh := &encodings{graph: g, docs: map[string][]byte{}}
		if h.encCache.CompareAndSwap(e, fresh) {
			e = fresh
		} else if e = h.encCache.Load(); e.graph != g {
			return h.encode(g, variant) // a newer graph won the race
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if doc, ok := e.docs[variant]; ok {
		return doc, nil
	}
	doc, err := h.encode(g, variant)
	if err != nil {
		return nil, err
	}
	e.docs[variant] = doc
	return doc, nil
}

// encode builds one document.
func (h *handlers) encode(g *topology.Graph, variant string) ([]byte, error) {
	if variant == variantDOT {
		return outline.AppendDOT(nil, h.summary(g)), nil
	}
	var buf bytes.Buffer
	s := &streamer{w: bufio.NewWriterSize(&buf, 64<<10)}
	if variant == variantDOTNodes {
		s.dot(g)
	} else {
		s.json(g)
	}
	if err := s.w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), s.err
}
