package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/topology"
)

// streamChunk is how many items are encoded between write-deadline
// extensions when a document is written straight to a client.
const streamChunk = 2048

// graph answers GET /v1/graph: the current (or ?snapshot=ID) graph as
// JSON, in topology's wire form so that it decodes into a
// topology.Graph (indented with ?pretty=1), or as Graphviz DOT with
// ?format=dot: one box per switch, nodes counted per leaf and per
// accelerator domain, or every node with ?detail=nodes. Each document of
// the current graph is encoded once and kept until the graph changes;
// it is sent in pieces, the write deadline extended after each. An
// older snapshot's JSON and per-node DOT are encoded straight to the
// client.
func (h *handlers) graph(c *gin.Context) {
	doc, err := graphDocOf(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if raw := c.Query("snapshot"); raw != "" {
		h.snapshotGraphDoc(c, raw, doc)
		return
	}
	st, ok := h.current(c)
	if !ok {
		return
	}
	h.sendGraph(c, st.Graph, st.Snapshot.ID, true, doc)
}

// graphDoc is the form of the graph GET /v1/graph asks for.
type graphDoc struct {
	variant string // one of the variant constants
	ctype   string // its Content-Type
}

// graphDocOf reads the form asked for from ?format, ?detail and ?pretty.
func graphDocOf(c *gin.Context) (graphDoc, error) {
	format := c.DefaultQuery("format", "json")
	if format != "json" && format != "dot" {
		return graphDoc{}, badParam("format", "want json or dot")
	}
	detail := c.DefaultQuery("detail", "switches")
	if detail != "switches" && detail != "nodes" {
		return graphDoc{}, badParam("detail", "want switches (nodes counted per leaf) or nodes")
	}
	pretty := false
	if raw := c.Query("pretty"); raw != "" {
		var err error
		if pretty, err = strconv.ParseBool(raw); err != nil {
			return graphDoc{}, badParam("pretty", "want 1 or 0")
		}
	}
	doc := graphDoc{variant: variantJSON, ctype: "application/json"}
	switch {
	case format == "dot" && detail == "nodes":
		doc.variant = variantDOTNodes
	case format == "dot":
		doc.variant = variantDOT
	case pretty:
		doc.variant = variantJSONPretty
	}
	if format == "dot" {
		doc.ctype = "text/vnd.graphviz; charset=utf-8"
	}
	return doc, nil
}

// snapshotGraphDoc answers with the graph of snapshot raw (an ID) in
// form doc, holding one of the reads of older snapshots meanwhile.
func (h *handlers) snapshotGraphDoc(c *gin.Context, raw string, doc graphDoc) {
	h.withSnapshot(c, raw, func(g *topology.Graph, id uint64, current bool) {
		h.sendGraph(c, g, id, current, doc)
	})
}

// withSnapshot loads the graph of snapshot raw (an ID), holding one of
// the bounded reads of older snapshots, and calls answer with it (current
// when it is the graph in use) before the read is released; a bad ID, no
// free read or a failed load is answered as an error instead.
func (h *handlers) withSnapshot(c *gin.Context, raw string, answer func(g *topology.Graph, id uint64, current bool)) {
	id, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		h.fail(c, badParam("snapshot", "must be a snapshot ID"))
		return
	}
	n, ok := h.snapReads.tryAcquire(h.olderGraphs(id))
	if !ok {
		h.fail(c, errSnapshotReads)
		return
	}
	defer h.snapReads.release(n)
	g, err := h.snapshotGraph(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	answer(g, id, g == h.Loop.State().Graph)
}

// sendGraph answers with g, the graph of snapshot snap, in form doc:
// not modified when the client has it, else the document kept for the
// current graph or, for an older one, encoded straight to the client.
func (h *handlers) sendGraph(c *gin.Context, g *topology.Graph, snap uint64, current bool, doc graphDoc) {
	etag := fmt.Sprintf(`"s%d-%s"`, snap, doc.variant)
	c.Header("ETag", etag)
	c.Header("X-Toposcope-Snapshot", strconv.FormatUint(snap, 10))
	if c.GetHeader("If-None-Match") == etag {
		c.Status(http.StatusNotModified)
		return
	}
	if !current && (doc.variant == variantJSON || doc.variant == variantDOTNodes) {
		// An older snapshot's document is kept by nobody: it is encoded
		// straight to the client rather than built in memory first.
		h.streamGraph(c, g, doc)
		return
	}
	body, err := h.derivedOf(g, current).Document(doc.variant)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Content-Type", doc.ctype)
	c.Header("Content-Length", strconv.Itoa(len(body)))
	c.Status(http.StatusOK)
	newStreamer(c, h.Config.WriteTimeout).write(body)
}

// streamGraph encodes g in form doc (compact JSON or per-node DOT)
// straight to the client.
func (h *handlers) streamGraph(c *gin.Context, g *topology.Graph, doc graphDoc) {
	c.Header("Content-Type", doc.ctype)
	c.Status(http.StatusOK)
	s := newStreamer(c, h.Config.WriteTimeout)
	if doc.variant == variantJSON {
		s.json(g)
	} else {
		s.dot(g)
	}
	if s.err == nil {
		_ = s.w.Flush()
	}
}

// write sends doc in pieces, extending the write deadline after each, so
// that a slow but live client gets the whole document.
func (s *streamer) write(doc []byte) {
	const piece = 256 << 10
	for len(doc) > 0 && s.err == nil {
		n := min(piece, len(doc))
		_, s.err = s.w.Write(doc[:n])
		doc = doc[n:]
		if s.err == nil {
			s.err = s.w.Flush()
		}
		if s.timeout > 0 {
			_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
		}
	}
}

// streamer writes a document in pieces, extending the connection's write
// deadline as it makes progress, so that a slow but live client gets the
// whole graph and a stalled one is cut off.
type streamer struct {
	w       *bufio.Writer
	rc      *http.ResponseController
	timeout time.Duration
	n       int
	err     error
}

func newStreamer(c *gin.Context, timeout time.Duration) *streamer {
	return &streamer{w: bufio.NewWriterSize(c.Writer, 64<<10), rc: http.NewResponseController(c.Writer), timeout: timeout}
}

// tick counts an item and extends the deadline every streamChunk items.
func (s *streamer) tick() {
	s.n++
	if s.n%streamChunk == 0 && s.timeout > 0 {
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	}
}

func (s *streamer) raw(text string) {
	if s.err == nil {
		_, s.err = s.w.WriteString(text)
	}
}

func (s *streamer) json(g *topology.Graph) {
	enc := json.NewEncoder(s.w)
	s.raw(`{"nodes":[`)
	writeList(s, enc, g.Nodes())
	s.raw(`],"switches":[`)
	writeList(s, enc, g.Switches())
	s.raw(`],"domains":[`)
	writeList(s, enc, g.Domains())
	s.raw("]}\n")
}

func writeList[T any](s *streamer, enc *json.Encoder, items []T) {
	for i := range items {
		if s.err != nil {
			return
		}
		if i > 0 {
			s.raw(",")
		}
		s.err = enc.Encode(&items[i])
		s.tick()
	}
}

// dot writes the switch tree with nodes as leaves and each accelerator
// domain as a cluster.
func (s *streamer) dot(g *topology.Graph) {
	var b []byte
	flush := func() {
		if s.err == nil {
			_, s.err = s.w.Write(b)
		}
		b = b[:0]
		s.tick()
	}
	s.raw("digraph topology {\n  rankdir=TB;\n  node [shape=box];\n")
	for _, sw := range g.Switches() {
		b = append(b, "  "...)
		b = appendString(b, "s:"+sw.ID)
		b = append(b, " [label="...)
		b = appendString(b, sw.Name)
		b = append(b, "];\n"...)
		if sw.Parent != "" {
			b = appendEdge(b, "s:"+sw.Parent, "s:"+sw.ID)
		}
		for _, n := range sw.Nodes {
			b = appendEdge(b, "s:"+sw.ID, "n:"+n)
		}
		flush()
	}
	for i, d := range g.Domains() {
		b = fmt.Appendf(b, "  subgraph cluster_%d {\n    label=", i)
		b = appendString(b, d.Name)
		b = append(b, ";\n    style=rounded;\n"...)
		for _, n := range d.Nodes {
			b = append(b, "    "...)
			b = appendString(b, "n:"+n)
			b = append(b, ";\n"...)
		}
		b = append(b, "  }\n"...)
		flush()
	}
	for _, n := range g.Nodes() {
		b = append(b, "  "...)
		b = appendString(b, "n:"+n.Name)
		b = append(b, " [shape=ellipse,label="...)
		b = appendString(b, n.Name)
		b = append(b, "];\n"...)
		flush()
	}
	s.raw("}\n")
}

func appendEdge(b []byte, from, to string) []byte {
	b = append(b, "  "...)
	b = appendString(b, from)
	b = append(b, " -> "...)
	b = appendString(b, to)
	return append(b, ";\n"...)
}

// snapshotGraph loads a stored graph for the diff handler.
func (h *handlers) snapshotGraph(ctx context.Context, id uint64) (*topology.Graph, error) {
	if st := h.Loop.State(); st.Snapshot != nil && st.Snapshot.ID == id {
		return st.Graph, nil
	}
	g, err := h.Store.Graph(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("snapshot %d: %w", id, err)
	}
	return g, nil
}
