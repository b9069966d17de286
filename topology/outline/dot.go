// Package outline draws a topology graph for people: an aggregated
// Graphviz DOT document and an indented text tree, both built from a
// topology.Summary so that a 100,000-node cluster stays readable (one
// box per switch, nodes counted per leaf and per accelerator domain).
package outline

import (
	"slices"
	"strconv"

	"github.com/toposcope/toposcope/topology"
)

// AppendDOT appends the aggregated DOT document of s's graph to b: one
// box per switch labelled with what lies below it, one ellipse per
// accelerator domain joined by a dashed edge to each leaf that holds some
// of its nodes (labelled with how many), and one box for the nodes under
// no switch, if any. Its size grows with switches and domains, not nodes.
func AppendDOT(b []byte, s *topology.Summary) []byte {
	g := s.Graph()
	b = append(b, "digraph topology {\n  rankdir=TB;\n  node [shape=box];\n"...)
	b = append(b, "  label="...)
	b = quote(b, "toposcope: "+count(s.Total.Nodes, "node")+", "+count(s.Total.GPUs, "GPU")+", "+
		count(s.Total.Switches, "switch")+", "+count(s.Total.Domains, "domain"))
	b = append(b, ";\n  labelloc=t;\n"...)
	perDomain := map[string]int{}
	var order []string
	for _, sw := range g.Switches() {
		agg, _ := s.Switch(sw.ID)
		b = append(b, "  "...)
		b = quote(b, "s:"+sw.ID)
		b = append(b, " [label="...)
		b = quote(b, switchLabel(&sw, agg))
		b = append(b, "];\n"...)
		if sw.Parent != "" {
			b = edge(b, "s:"+sw.Parent, "s:"+sw.ID, "")
		}
		clear(perDomain)
		order = order[:0]
		for _, name := range sw.Nodes {
			n, _ := g.Node(name)
			if n.Domain == "" {
				continue
			}
			if perDomain[n.Domain] == 0 {
				order = append(order, n.Domain)
			}
			perDomain[n.Domain]++
		}
		for _, d := range order {
			b = edge(b, "s:"+sw.ID, "d:"+d, strconv.Itoa(perDomain[d]))
		}
	}
	for _, d := range g.Domains() {
		b = append(b, "  "...)
		b = quote(b, "d:"+d.ID)
		b = append(b, " [shape=ellipse,style=dashed,label="...)
		label := d.Name + "\n" + count(len(d.Nodes), "node")
		if len(d.SubDomains) > 0 {
			label += ", " + count(len(d.SubDomains), "sub-domain")
		}
		b = quote(b, label)
		b = append(b, "];\n"...)
	}
	if s.Unswitched.Nodes > 0 {
		unswitched := g.NodesWithoutSwitch()
		clear(perDomain)
		order = order[:0]
		for _, name := range unswitched {
			if n, _ := g.Node(name); n.Domain != "" {
				if perDomain[n.Domain] == 0 {
					order = append(order, n.Domain)
				}
				perDomain[n.Domain]++
			}
		}
		b = append(b, "  \"unswitched\" [style=dotted,label="...)
		b = quote(b, "under no switch\n"+count(s.Unswitched.Nodes, "node")+", "+count(s.Unswitched.GPUs, "GPU"))
		b = append(b, "];\n"...)
		slices.Sort(order)
		for _, d := range order {
			b = edge(b, "unswitched", "d:"+d, strconv.Itoa(perDomain[d]))
		}
	}
	return append(b, "}\n"...)
}

func switchLabel(sw *topology.Switch, agg topology.Aggregate) string {
	name := sw.Name
	if sw.DisplayName != "" && sw.DisplayName != sw.Name {
		name = sw.DisplayName + " (" + sw.Name + ")"
	}
	label := name + "\n" + count(agg.Nodes, "node") + ", " + count(agg.GPUs, "GPU")
	if agg.Switches > 0 {
		label += "\n" + count(agg.Switches, "switch") + " below"
	}
	return label
}

// count writes n and the noun, plural unless n is 1.
func count(n int, noun string) string {
	s := strconv.Itoa(n) + " " + noun
	if n == 1 {
		return s
	}
	if noun == "switch" {
		return s + "es"
	}
	return s + "s"
}

func edge(b []byte, from, to, label string) []byte {
	b = append(b, "  "...)
	b = quote(b, from)
	b = append(b, " -> "...)
	b = quote(b, to)
	if label != "" {
		b = append(b, " [style=dashed,label="...)
		b = quote(b, label)
		b = append(b, ']')
	}
	return append(b, ";\n"...)
}

// quote appends s as a DOT string: a line break becomes DOT's \n, and a
// backslash or quote in a name is escaped so that it cannot end the
// string.
func quote(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c < 0x20:
			b = append(b, ' ')
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
