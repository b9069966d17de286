package slurm

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// maxTreeSwitches is the most switches Slurm's tree plugin can hold: its
// switch indexes are uint16_t and 0xffff means "no parent".
const maxTreeSwitches = 65534

// treeLine is one switch as written: its kept nodes or kept children.
type treeLine struct {
	sw       *topology.Switch
	nodes    []string // node names, natural order
	children []string // names of the kept child switches
}

// treePlan is what a tree topology writes, leaves first.
type treePlan struct {
	lines []treeLine
	// dropped names the switches left out because they (and everything
	// under them) hold no node.
	dropped []string
	// total is the number of switches in the graph.
	total int
}

// planTree selects the switches to write. include filters nodes (nil keeps
// all). With keepEmpty, switches with no node below them are kept;
// otherwise they are left out, and so are parents left with nothing.
func planTree(g *topology.Graph, include func(string) bool, keepEmpty bool) treePlan {
	sws := g.Switches()
	p := treePlan{total: len(sws), lines: make([]treeLine, 0, len(sws))}
	kept := make(map[string]string, len(sws)) // kept switch ID -> name
	// Switches() is leaves first, ascending level: every child is decided
	// before its parent.
	for i := range sws {
		s := &sws[i]
		line := treeLine{sw: s, nodes: s.Nodes}
		if include != nil {
			line.nodes = filterNames(s.Nodes, include)
		}
		if len(s.Children) > 0 {
			line.children = make([]string, 0, len(s.Children))
			for _, c := range s.Children {
				if name, ok := kept[c]; ok {
					line.children = append(line.children, name)
				}
			}
		}
		if !keepEmpty && len(line.nodes) == 0 && len(line.children) == 0 {
			p.dropped = append(p.dropped, s.Name)
			continue
		}
		kept[s.ID] = s.Name
		p.lines = append(p.lines, line)
	}
	return p
}

// addUnplaced puts the graph's nodes under no switch (that include keeps)
// under a switch of their own named name, written last; "" leaves them
// out. A switch of the graph with that name is an error.
func (p *treePlan) addUnplaced(g *topology.Graph, name string, include func(string) bool) error {
	if name == "" {
		return nil
	}
	un := g.NodesWithoutSwitch()
	if include != nil {
		un = filterNames(un, include)
	}
	if len(un) == 0 {
		return nil
	}
	if slices.ContainsFunc(g.Switches(), func(s topology.Switch) bool { return s.Name == name }) {
		return fmt.Errorf("unplacedSwitch %q is also the name of a switch of the fabric; choose another: %w", name, engines.ErrInexpressible)
	}
	p.lines = append(p.lines, treeLine{sw: &topology.Switch{ID: name, Name: name}, nodes: un})
	return nil
}

// filterNames returns the names that include keeps; names itself when it
// keeps them all.
func filterNames(names []string, include func(string) bool) []string {
	for i, n := range names {
		if include(n) {
			continue
		}
		out := append(make([]string, 0, len(names)-1), names[:i]...)
		for _, m := range names[i+1:] {
			if include(m) {
				out = append(out, m)
			}
		}
		return out
	}
	return names
}

// check reports, wrapping engines.ErrInexpressible, a plan that the
// target version cannot load. what names the topology in messages.
func (p treePlan) check(v Version, what string) error {
	if len(p.lines) > maxTreeSwitches {
		return fmt.Errorf("%s: %d switches, but Slurm's tree plugin holds at most %d (16-bit switch indexes): %w",
			what, len(p.lines), maxTreeSwitches, engines.ErrInexpressible)
	}
	if len(p.lines) > 0 {
		return nil
	}
	if p.total == 0 {
		return fmt.Errorf("%s: the graph has no switch, and a tree topology needs at least one: %w", what, engines.ErrInexpressible)
	}
	return fmt.Errorf("%s: all %d switches (%s) hold no node; Slurm %s refuses a switch with neither nodes nor child switches (25.05 and later accept it), which leaves no switch to write: %w",
		what, p.total, abbreviate(p.dropped, 5), v, engines.ErrInexpressible)
}

// renderTreeConf writes the plan as topology.conf lines.
func renderTreeConf(buf *bytes.Buffer, p treePlan, idComments bool) {
	var z hostlist.Compressor
	var list []byte
	for i := range p.lines {
		l := &p.lines[i]
		if idComments {
			writeIDComment(buf, l.sw.Name, l.sw.ID)
		}
		buf.WriteString("SwitchName=")
		buf.WriteString(l.sw.Name)
		switch {
		case len(l.nodes) > 0:
			buf.WriteString(" Nodes=")
			list = z.Append(list[:0], l.nodes)
			buf.Write(list)
		case len(l.children) > 0:
			buf.WriteString(" Switches=")
			list = z.Append(list[:0], l.children)
			buf.Write(list)
		}
		if l.sw.LinkSpeedGbps > 0 {
			buf.WriteString(" LinkSpeed=")
			buf.WriteString(strconv.FormatUint(uint64(l.sw.LinkSpeedGbps), 10))
		}
		buf.WriteByte('\n')
	}
}

// writeIDComment writes "# name = "id"" when the provider ID differs from
// the written name. The ID is quoted with Go escapes, so it can never end
// the comment line.
func writeIDComment(buf *bytes.Buffer, name, id string) {
	if id == name || id == "" {
		return
	}
	buf.WriteString("# ")
	buf.WriteString(name)
	buf.WriteString(" = ")
	buf.WriteString(strconv.QuoteToASCII(id))
	buf.WriteByte('\n')
}

// treeCoverage lists the nodes a tree plan leaves out.
func treeCoverage(g *topology.Graph) engines.Coverage {
	un := g.NodesWithoutSwitch()
	if len(un) == 0 {
		return engines.Coverage{}
	}
	return engines.Coverage{Uncovered: un, Reason: "under no switch: topology/tree never allocates them"}
}
