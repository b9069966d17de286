package outline

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/toposcope/toposcope/topology"
)

// TextOptions shape the text tree.
type TextOptions struct {
	// Depth is how many switch levels to draw from the top; 0 draws all.
	Depth int
	// MaxChildren is how many children of one switch to draw before a
	// line that counts the rest; 0 draws all.
	MaxChildren int
	// Nodes lists the nodes under each drawn leaf (at most MaxChildren).
	Nodes bool
}

// WriteText draws s's graph as an indented tree: a heading with the
// totals, then each root switch and, down to opts.Depth levels, its
// children, each line with the nodes, GPUs and domains below it. A switch
// whose children are not drawn says how many switches lie below it.
func WriteText(w io.Writer, s *topology.Summary, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	t := &textTree{w: bw, s: s, g: s.Graph(), opts: opts}
	fmt.Fprintf(bw, "%s, %s, %s, %s, %s\n", count(s.Total.Nodes, "node"), count(s.Total.GPUs, "GPU"),
		count(s.Total.Switches, "switch"), count(s.Total.Domains, "domain"), count(t.g.Depth(), "level"))
	roots := t.g.Roots()
	ids := make([]string, len(roots))
	for i, r := range roots {
		ids[i] = r.ID
	}
	t.children(ids, "", 1)
	if u := s.Unswitched; u.Nodes > 0 {
		fmt.Fprintf(bw, "under no switch: %s, %s, %s\n", count(u.Nodes, "node"), count(u.GPUs, "GPU"), count(u.Domains, "domain"))
	}
	return bw.Flush()
}

type textTree struct {
	w    *bufio.Writer
	s    *topology.Summary
	g    *topology.Graph
	opts TextOptions
}

// children draws the switches ids at depth (1 for the roots).
func (t *textTree) children(ids []string, indent string, depth int) {
	shown := len(ids)
	if t.opts.MaxChildren > 0 && shown > t.opts.MaxChildren {
		shown = t.opts.MaxChildren
	}
	var rest topology.Aggregate
	for _, id := range ids[shown:] {
		a, _ := t.s.Switch(id)
		rest.Nodes += a.Nodes
		rest.GPUs += a.GPUs
	}
	for i, id := range ids[:shown] {
		last := i == len(ids)-1
		sw, _ := t.g.Switch(id)
		branch, next := "├── ", "│   "
		if last {
			branch, next = "└── ", "    "
		}
		if depth == 1 {
			branch, next = "", ""
		}
		t.line(indent+branch, sw)
		if t.opts.Depth == 0 || depth < t.opts.Depth {
			t.children(sw.Children, indent+next, depth+1)
			if t.opts.Nodes {
				t.nodes(sw.Nodes, indent+next)
			}
		}
	}
	if shown < len(ids) {
		fmt.Fprintf(t.w, "%s└── … %s more (%s, %s)\n", indent, count(len(ids)-shown, "switch"), count(rest.Nodes, "node"), count(rest.GPUs, "GPU"))
	}
}

// line draws one switch.
func (t *textTree) line(prefix string, sw *topology.Switch) {
	a, _ := t.s.Switch(sw.ID)
	name := sw.Name
	if sw.DisplayName != "" && sw.DisplayName != sw.Name {
		name += " (" + sw.DisplayName + ")"
	}
	fmt.Fprintf(t.w, "%s%s  L%d  %s · %s · %s", prefix, name, sw.Level, count(a.Nodes, "node"), count(a.GPUs, "GPU"), count(a.Domains, "domain"))
	if a.Switches > 0 {
		fmt.Fprintf(t.w, " · %s below", count(a.Switches, "switch"))
	}
	_ = t.w.WriteByte('\n')
}

// nodes lists the nodes directly under a switch.
func (t *textTree) nodes(names []string, indent string) {
	shown := len(names)
	if t.opts.MaxChildren > 0 && shown > t.opts.MaxChildren {
		shown = t.opts.MaxChildren
	}
	for i, name := range names[:shown] {
		branch := "├── "
		if i == len(names)-1 {
			branch = "└── "
		}
		n, _ := t.g.Node(name)
		fmt.Fprintf(t.w, "%s%s%s\n", indent, branch, nodeText(t.g, n))
	}
	if shown < len(names) {
		fmt.Fprintf(t.w, "%s└── … %s more\n", indent, count(len(names)-shown, "node"))
	}
}

// nodeText describes one node on one line.
func nodeText(g *topology.Graph, n *topology.Node) string {
	parts := []string{n.Name, count(n.GPUs, "GPU")}
	if d, ok := g.Domain(n.Domain); ok {
		part := "domain " + d.Name + " (" + count(len(d.Nodes), "node") + ")"
		if n.SubDomain != "" {
			part += ", sub-domain " + n.SubDomain
		}
		parts = append(parts, part)
	}
	if n.InstanceID != "" {
		parts = append(parts, "instance "+n.InstanceID)
	}
	if n.Region != "" || n.Zone != "" {
		parts = append(parts, strings.Trim(n.Region+"/"+n.Zone, "/"))
	}
	return strings.Join(parts, " · ")
}

// WritePath draws the switches from the top down to the named node, and
// the node. It returns false, writing nothing, when g has no such node.
func WritePath(w io.Writer, s *topology.Summary, node string) (bool, error) {
	g := s.Graph()
	n, ok := g.Node(node)
	if !ok {
		return false, nil
	}
	bw := bufio.NewWriter(w)
	t := &textTree{w: bw, s: s, g: g}
	path := g.Path(node)
	indent := ""
	for i := len(path) - 1; i >= 0; i-- {
		prefix := indent
		if i < len(path)-1 {
			prefix += "└── "
			indent += "    "
		}
		t.line(prefix, path[i])
	}
	if len(path) > 0 {
		indent += "└── "
	} else {
		indent = "under no switch: "
	}
	fmt.Fprintf(bw, "%s%s\n", indent, nodeText(g, n))
	return true, bw.Flush()
}
