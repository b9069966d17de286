package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/topology"
)

// maxNeighbours caps the neighbour list of GET /v1/nodes/{name}.
const maxNeighbours = 1024

// current returns the current state, or fails the request when there is
// no topology yet.
func (h *handlers) current(c *gin.Context) (*service.State, bool) {
	st := h.Loop.State()
	if st.Graph == nil {
		h.fail(c, service.ErrNoTopology)
		return nil, false
	}
	c.Header("X-Toposcope-Snapshot", strconv.FormatUint(st.Snapshot.ID, 10))
	return st, true
}

// node answers GET /v1/nodes/{name}: the node, its switch path (leaf
// first), domain, sub-domain and neighbours (the other nodes under its
// leaf switch). It is the hot path, so it is encoded by hand.
func (h *handlers) node(c *gin.Context) {
	st, ok := h.current(c)
	if !ok {
		return
	}
	name := strings.TrimPrefix(c.Param("name"), "/")
	g := st.Graph
	n, found := g.Node(name)
	if !found {
		h.fail(c, &service.RequestError{Field: "name", Err: errNotFound("node " + strconv.Quote(name))})
		return
	}
	bp := getBuf()
	o := jsonObj{b: append((*bp)[:0], '{'), first: true}
	o.int("snapshot", int(st.Snapshot.ID))
	in := o.open("node")
	appendNode(in, n)
	o.close(in)
	o.key("path")
	o.b = append(o.b, '[')
	for id, i := n.Leaf, 0; id != ""; i++ {
		s, _ := g.Switch(id)
		if i > 0 {
			o.b = append(o.b, ',')
		}
		so := jsonObj{b: append(o.b, '{'), first: true}
		so.str("id", s.ID)
		so.str("name", s.Name)
		so.int("level", s.Level)
		o.b = append(so.b, '}')
		id = s.Parent
	}
	o.b = append(o.b, ']')
	if d, ok := g.Domain(n.Domain); ok {
		do := o.open("domain")
		do.str("id", d.ID)
		do.str("name", d.Name)
		do.int("nodes", len(d.Nodes))
		o.close(do)
		for i := range d.SubDomains {
			if sd := &d.SubDomains[i]; sd.ID == n.SubDomain {
				so := o.open("subDomain")
				so.str("id", sd.ID)
				so.str("name", sd.Name)
				so.int("nodes", len(sd.Nodes))
				o.close(so)
			}
		}
	}
	var peers []string
	if s, ok := g.Switch(n.Leaf); ok {
		peers = s.Nodes
	}
	o.key("neighbours")
	o.b = append(o.b, '[')
	count := 0
	for _, p := range peers {
		if p == n.Name {
			continue
		}
		if count < maxNeighbours {
			if count > 0 {
				o.b = append(o.b, ',')
			}
			o.b = appendString(o.b, p)
		}
		count++
	}
	o.b = append(o.b, ']')
	o.int("neighbourCount", count)
	o.bool("neighboursTruncated", count > maxNeighbours)
	o.b = append(o.b, '}')
	*bp = o.b
	c.Data(http.StatusOK, "application/json", o.b)
	putBuf(bp)
}

func appendNode(o *jsonObj, n *topology.Node) {
	o.str("name", n.Name)
	o.optStr("instanceID", n.InstanceID)
	o.optStr("region", n.Region)
	o.optStr("zone", n.Zone)
	o.int("gpus", n.GPUs)
	if len(n.Attributes) > 0 {
		o.strMap("attributes", n.Attributes)
	}
	o.optStr("leaf", n.Leaf)
	o.optStr("domain", n.Domain)
	o.optStr("subDomain", n.SubDomain)
}

// switchJSON is the answer of GET /v1/switches/{id}.
type switchJSON struct {
	Snapshot uint64           `json:"snapshot"`
	Switch   *topology.Switch `json:"switch"`
	// Path lists the switches above it, closest first.
	Path []pathEntry `json:"path"`
	// NodesBelow counts the nodes anywhere under it.
	NodesBelow int `json:"nodesBelow"`
}

type pathEntry struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Level int    `json:"level"`
}

// switchByID answers GET /v1/switches/{id}; the ID may contain slashes,
// and the switch's safe name is accepted too.
func (h *handlers) switchByID(c *gin.Context) {
	st, ok := h.current(c)
	if !ok {
		return
	}
	id := strings.TrimPrefix(c.Param("id"), "/")
	g := st.Graph
	s, found := g.Switch(id)
	if !found {
		for i := range g.Switches() {
			if g.Switches()[i].Name == id {
				s, found = &g.Switches()[i], true
				break
			}
		}
	}
	if !found {
		h.fail(c, &service.RequestError{Field: "id", Err: errNotFound("switch " + strconv.Quote(id))})
		return
	}
	out := switchJSON{Snapshot: st.Snapshot.ID, Switch: s, Path: []pathEntry{}, NodesBelow: nodesBelow(g, s)}
	for p := s.Parent; p != ""; {
		ps, _ := g.Switch(p)
		out.Path = append(out.Path, pathEntry{ID: ps.ID, Name: ps.Name, Level: ps.Level})
		p = ps.Parent
	}
	c.JSON(http.StatusOK, out)
}

func nodesBelow(g *topology.Graph, s *topology.Switch) int {
	n := len(s.Nodes)
	for _, c := range s.Children {
		cs, _ := g.Switch(c)
		n += nodesBelow(g, cs)
	}
	return n
}

// domainJSON is one entry of GET /v1/domains.
type domainJSON struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	NodeCount  int             `json:"nodeCount"`
	Nodes      string          `json:"nodes"`
	SubDomains []subDomainJSON `json:"subDomains,omitempty"`
}

type subDomainJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	NodeCount int    `json:"nodeCount"`
	Nodes     string `json:"nodes"`
}

// domains answers GET /v1/domains, streamed: every accelerator domain in
// fabric order, with its nodes as a Slurm hostlist.
func (h *handlers) domains(c *gin.Context) {
	st, ok := h.current(c)
	if !ok {
		return
	}
	c.Header("Content-Type", "application/json")
	c.Status(http.StatusOK)
	w := bufio.NewWriterSize(c.Writer, 32<<10)
	enc := json.NewEncoder(w)
	_, _ = w.WriteString(`{"snapshot":` + strconv.FormatUint(st.Snapshot.ID, 10) + `,"domains":[`)
	for i, d := range st.Graph.DomainsInFabricOrder() {
		if i > 0 {
			_ = w.WriteByte(',')
		}
		dj := domainJSON{ID: d.ID, Name: d.Name, NodeCount: len(d.Nodes), Nodes: hostlist.Compress(d.Nodes)}
		for _, sd := range d.SubDomains {
			dj.SubDomains = append(dj.SubDomains, subDomainJSON{ID: sd.ID, Name: sd.Name, NodeCount: len(sd.Nodes), Nodes: hostlist.Compress(sd.Nodes)})
		}
		if err := enc.Encode(dj); err != nil {
			return // the client went away
		}
	}
	_, _ = w.WriteString("]}\n")
	_ = w.Flush()
}

type notFoundError struct{ what string }

func (e *notFoundError) Error() string { return e.what + " not found" }
func (e *notFoundError) Unwrap() error { return store.ErrNotFound }

func errNotFound(what string) error { return &notFoundError{what} }
