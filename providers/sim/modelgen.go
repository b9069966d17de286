package sim

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// Shape is the kind of fabric Generate builds.
type Shape string

// The shapes Generate knows.
const (
	// ShapeFatTree is a 3-tier fat tree (core, spines, leaves) of 8-GPU
	// nodes, with optional accelerator domains.
	ShapeFatTree Shape = "fat-tree"
	// ShapeNVL72 is GB200 NVL72 racks of 4-GPU nodes: one 18-node NVLink
	// domain per rack, two racks per leaf, in a 3-tier tree.
	ShapeNVL72 Shape = "nvl72"
)

// MaxGenerateNodes is the largest model Generate writes.
const MaxGenerateNodes = 1_000_000

// GenerateOptions say what model Generate writes. Zero fields take the
// shape's defaults.
type GenerateOptions struct {
	// Shape is the fabric; fat-tree when empty.
	Shape Shape
	// Nodes is the exact number of nodes, 1 to MaxGenerateNodes.
	Nodes int
	// NodesPerLeaf is the number of nodes under each leaf switch (the
	// last leaf may hold fewer). Default 32 for fat-tree, and two domains'
	// worth (36) for nvl72.
	NodesPerLeaf int
	// LeavesPerSpine is the number of leaves under each spine. Default 16.
	LeavesPerSpine int
	// SpinesPerCore is the number of spines under each core switch. The
	// default, 0, puts every spine under one core switch "core"; a
	// positive value makes several cores core001, core002, ... which are
	// separate roots.
	SpinesPerCore int
	// DomainSize is the number of nodes in each accelerator domain (the
	// last may hold fewer); 0 means no domains. Default 18 for nvl72, 0
	// for fat-tree.
	DomainSize int
	// Prefix starts every node name. Default "gpu" for fat-tree and "gb"
	// for nvl72.
	Prefix string
}

// withDefaults validates opts and fills in the shape's defaults. Errors
// name the option as the CLI spells it (nodes-per-leaf for NodesPerLeaf).
func (o GenerateOptions) withDefaults() (GenerateOptions, error) {
	var errs []error
	bad := func(option, format string, args ...any) {
		errs = append(errs, fmt.Errorf("option %s: "+format, append([]any{option}, args...)...))
	}
	switch o.Shape {
	case "", ShapeFatTree:
		o.Shape = ShapeFatTree
		o.Prefix = cmp.Or(o.Prefix, "gpu")
	case ShapeNVL72:
		o.DomainSize = cmp.Or(o.DomainSize, 18)
		o.NodesPerLeaf = cmp.Or(o.NodesPerLeaf, 2*max(o.DomainSize, 1))
		o.Prefix = cmp.Or(o.Prefix, "gb")
	default:
		bad("shape", "unknown shape %q (known: %s, %s)", o.Shape, ShapeFatTree, ShapeNVL72)
	}
	o.NodesPerLeaf = cmp.Or(o.NodesPerLeaf, 32)
	o.LeavesPerSpine = cmp.Or(o.LeavesPerSpine, 16)
	if o.Nodes < 1 || o.Nodes > MaxGenerateNodes {
		bad("nodes", "must be from 1 to %d, not %d", MaxGenerateNodes, o.Nodes)
	}
	// Leaves and domains list their nodes as one hostlist range, which
	// may not hold more than hostlist.MaxRange names.
	for _, opt := range []struct {
		name     string
		v        int
		min, max int
	}{
		{"nodes-per-leaf", o.NodesPerLeaf, 1, hostlist.MaxRange},
		{"leaves-per-spine", o.LeavesPerSpine, 1, MaxGenerateNodes},
		{"spines-per-core", o.SpinesPerCore, 0, MaxGenerateNodes},
		{"domain-size", o.DomainSize, 0, hostlist.MaxRange},
	} {
		if opt.v < opt.min || opt.v > opt.max {
			bad(opt.name, "must be from %d to %d, not %d", opt.min, opt.max, opt.v)
		}
	}
	if err := checkPrefix(o.Prefix); err != nil {
		bad("prefix", "%w", err)
	}
	return o, errors.Join(errs...)
}

// checkPrefix accepts a letter followed by letters, digits, '-' and '_':
// what makes a plain YAML scalar and a hostlist prefix.
func checkPrefix(p string) error {
	if p == "" {
		return errors.New("is empty")
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if i == 0 && !letter {
			return fmt.Errorf("%q must start with a letter", p)
		}
		if !letter && (c < '0' || c > '9') && c != '-' && c != '_' {
			return fmt.Errorf("%q: character %q is not allowed (letters, digits, '-', '_')", p, c)
		}
	}
	return nil
}

// Generate writes a model of exactly opts.Nodes nodes in the given shape.
//
// Nodes are numbered from 1 and named Prefix plus the number zero-padded
// to the width of the largest number (at least 3 digits): gpu001..gpu512.
// Leaves take NodesPerLeaf consecutive nodes, spines LeavesPerSpine
// consecutive leaves; the last leaf, spine and domain may be partial.
// Switch and domain IDs depend only on their position, so growing Nodes
// never renames or moves an existing switch: "core" (or core001, ... with
// SpinesPerCore), spine001, leaf0001, and domains nvl0001. Every leaf and
// domain lists its nodes as one hostlist range, so even a million-node
// model is a small file.
func Generate(opts GenerateOptions) ([]byte, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("generate model: %w", err)
	}
	gpus := 8
	if o.Shape == ShapeNVL72 {
		gpus = 4
	}
	g := generator{opts: o, width: max(3, len(strconv.Itoa(o.Nodes)))}
	leaves := ceilDiv(o.Nodes, o.NodesPerLeaf)
	spines := ceilDiv(leaves, o.LeavesPerSpine)
	perCore := spines
	if o.SpinesPerCore > 0 {
		perCore = o.SpinesPerCore
	}
	cores := ceilDiv(spines, perCore)
	domains := 0
	if o.DomainSize > 0 {
		domains = ceilDiv(o.Nodes, o.DomainSize)
	}

	b := &g.buf
	b.Grow(128 + 60*(spines+leaves+domains))
	fmt.Fprintf(b, "# Generated by toposcope: shape %s, %s.\n", o.Shape, plural(o.Nodes, "node"))
	fmt.Fprintf(b, "name: %s-%d\n", o.Shape, o.Nodes)
	fmt.Fprintf(b, "description: >-\n  %s\n", g.describe(leaves, spines, cores, domains))
	fmt.Fprintf(b, "defaults:\n  gpus: %d\n", gpus)
	b.WriteString("switches:\n")
	for c := range cores {
		if o.SpinesPerCore > 0 {
			g.line("  - id: core", c+1, 3)
		} else {
			b.WriteString("  - id: core\n")
		}
		b.WriteString("    children:\n")
		for s := c * perCore; s < min(spines, (c+1)*perCore); s++ {
			g.line("      - id: spine", s+1, 3)
			b.WriteString("        children:\n")
			for l := s * o.LeavesPerSpine; l < min(leaves, (s+1)*o.LeavesPerSpine); l++ {
				g.line("          - id: leaf", l+1, 4)
				b.WriteString("            nodes: ")
				g.nodes(l*o.NodesPerLeaf, min(o.Nodes, (l+1)*o.NodesPerLeaf))
			}
		}
	}
	if domains > 0 {
		b.WriteString("domains:\n")
		for d := range domains {
			g.line("  - id: nvl", d+1, 4)
			b.WriteString("    nodes: ")
			g.nodes(d*o.DomainSize, min(o.Nodes, (d+1)*o.DomainSize))
		}
	}
	return g.buf.Bytes(), nil
}

type generator struct {
	opts  GenerateOptions
	width int
	buf   bytes.Buffer
	num   []byte
}

// line writes text, n zero-padded to width digits, and a newline.
func (g *generator) line(text string, n, width int) {
	g.buf.WriteString(text)
	g.pad(n, width)
	g.buf.WriteByte('\n')
}

func (g *generator) pad(n, width int) {
	g.num = strconv.AppendInt(g.num[:0], int64(n), 10)
	for i := len(g.num); i < width; i++ {
		g.buf.WriteByte('0')
	}
	g.buf.Write(g.num)
}

// nodes writes the hostlist of nodes from+1 .. to and a newline.
func (g *generator) nodes(from, to int) {
	g.buf.WriteString(g.opts.Prefix)
	if to-from == 1 {
		g.pad(to, g.width)
	} else {
		g.buf.WriteByte('[')
		g.pad(from+1, g.width)
		g.buf.WriteByte('-')
		g.pad(to, g.width)
		g.buf.WriteByte(']')
	}
	g.buf.WriteByte('\n')
}

func (g *generator) describe(leaves, spines, cores, domains int) string {
	o := g.opts
	var s strings.Builder
	fmt.Fprintf(&s, "Generated %s model of %s: %s of up to %d nodes, %s of up to %d leaves, ",
		o.Shape, plural(o.Nodes, "node"), plural(leaves, "leaf"), o.NodesPerLeaf, plural(spines, "spine"), o.LeavesPerSpine)
	if o.SpinesPerCore > 0 {
		fmt.Fprintf(&s, "%s of up to %d spines", plural(cores, "core"), o.SpinesPerCore)
	} else {
		s.WriteString("one core")
	}
	if domains > 0 {
		fmt.Fprintf(&s, "; %s of up to %d nodes", plural(domains, "accelerator domain"), o.DomainSize)
	}
	s.WriteString(".")
	return s.String()
}

// plural writes n and word, made plural when n is not 1.
func plural(n int, word string) string {
	switch {
	case n == 1:
	case strings.HasSuffix(word, "f"):
		word = strings.TrimSuffix(word, "f") + "ves"
	default:
		word += "s"
	}
	return strconv.Itoa(n) + " " + word
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// GenerateGraph generates a model (see Generate) and builds its whole
// graph: a cluster of a given size and shape for benchmarks, emulators
// and tests.
func GenerateGraph(opts GenerateOptions) (*topology.Graph, error) {
	data, err := Generate(opts)
	if err != nil {
		return nil, err
	}
	m, err := Parse(data, "generated")
	if err != nil {
		return nil, err
	}
	return m.Graph(providers.Request{})
}
