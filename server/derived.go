package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
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

// derived is what the server computes from one graph and keeps while that
// graph is current: its summary (views and DOT) and its encoded documents (GET /v1/graph copies
// bytes instead of encoding again). Each is made the first time it is
// asked for.
type derived struct {
	graph *topology.Graph

	summaryOnce sync.Once
	summary     *topology.Summary

	mu   sync.Mutex // guards docs
	docs map[string][]byte

	fabric fabricPlaces // each node's place in GET /v1/fabric's order
}

// derivedOf returns the derived values of g. Those of the current graph
// (current true) are kept until another graph becomes current; those of
// any other graph (a stored snapshot) are made for the one request and
// never replace the current graph's.
func (h *handlers) derivedOf(g *topology.Graph, current bool) *derived {
	if !current {
		return &derived{graph: g, docs: map[string][]byte{}}
	}
	for {
		d := h.derived.Load()
		if d != nil && d.graph == g {
			return d
		}
		fresh := &derived{graph: g, docs: map[string][]byte{}}
		if h.derived.CompareAndSwap(d, fresh) {
			return fresh
		}
	}
}

// Summary returns the graph's summary.
func (d *derived) Summary() *topology.Summary {
	d.summaryOnce.Do(func() { d.summary = topology.Summarize(d.graph) })
	return d.summary
}

// Document returns the graph's document variant, encoded once. The
// indented JSON is made on each request from the kept compact one: a
// reading aid is not worth keeping a second, larger copy.
func (d *derived) Document(variant string) ([]byte, error) {
	if variant == variantJSONPretty {
		compact, err := d.Document(variantJSON)
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		out.Grow(len(compact) * 2)
		err = json.Indent(&out, compact, "", "  ")
		return out.Bytes(), err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if doc, ok := d.docs[variant]; ok {
		return doc, nil
	}
	var doc []byte
	if variant == variantDOT {
		// The outline is small (1.15 MB at 100,000 nodes): appended,
		// then kept as an exact copy.
		dot := outline.AppendDOT(nil, d.Summary())
		doc = make([]byte, len(dot))
		copy(doc, dot)
	} else {
		// Encoded twice: once to count the bytes, once into a buffer of
		// exactly that size. A growing buffer would leave about as much
		// garbage as the document itself (32 MB of heap for a 9.7 MB
		// document of 100,000 nodes) and keep up to twice its size.
		var size counter
		if err := d.encode(&size, variant); err != nil {
			return nil, err
		}
		buf := bytes.NewBuffer(make([]byte, 0, int(size)))
		if err := d.encode(buf, variant); err != nil {
			return nil, err
		}
		doc = buf.Bytes()
	}
	d.docs[variant] = doc
	return doc, nil
}

// encode writes the graph's JSON or per-node DOT document to w.
func (d *derived) encode(w io.Writer, variant string) error {
	s := &streamer{w: bufio.NewWriterSize(w, 64<<10)}
	if variant == variantDOTNodes {
		s.dot(d.graph)
	} else {
		s.json(d.graph)
	}
	if err := s.w.Flush(); err != nil {
		return err
	}
	return s.err
}

// counter is a writer that keeps only the number of bytes written.
type counter int64

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}
