package sim

import (
	"bytes"
	"strings"

	"gopkg.in/yaml.v3"
)

// A 300,000-node model is 1.4 MB of YAML in 110,000 nodes, and yaml.v3
// takes a fifth of `generate`'s time to read it. Models are mostly
// written by `toposcope model generate` or by hand in the same plain
// block style, which readBlockYAML reads straight into the yaml.Node
// tree yaml.v3 would build (kinds, tags, values and lines; the decoder
// reads nothing else). Anything outside that style (flow collections,
// quotes, anchors, tags, comments after a value, tabs, several
// documents, a scalar yaml.v3 might resolve to anything but a string or
// a decimal integer) makes it give up, and yaml.v3 reads the document:
// the result is the same either way (TestBlockYAMLMatchesYAMLv3,
// FuzzBlockYAML). It reads printable ASCII only: YAML gives some other
// characters meanings of their own (U+0085 and U+2028 end lines).

// yline is one line of a document that holds something: its number, its
// indentation and the text after it.
type yline struct {
	num    int
	indent int
	text   string
}

// blockReader reads the lines of a document; depth is the nesting of
// the collection being read.
type blockReader struct {
	lines []yline
	i     int
	depth int
	slab  []yaml.Node // nodes are handed out from here, a block at a time
}

// node returns a new node holding n.
func (r *blockReader) node(n yaml.Node) *yaml.Node {
	if len(r.slab) == cap(r.slab) {
		r.slab = make([]yaml.Node, 0, 1024)
	}
	r.slab = append(r.slab, n)
	return &r.slab[len(r.slab)-1]
}

// maxBlockDepth bounds the nesting readBlockYAML reads (a model nests a
// few levels per switch tier).
const maxBlockDepth = 200

// readBlockYAML returns the root node of data, or false when data is
// not in the plain block style.
func readBlockYAML(data []byte) (*yaml.Node, bool) {
	for _, c := range data { // printable ASCII and newlines only
		if (c < ' ' && c != '\n') || c > '~' {
			return nil, false
		}
	}
	r := &blockReader{lines: make([]yline, 0, bytes.Count(data, []byte{'\n'})+1)}
	for num, rest := 1, string(data); rest != ""; num++ {
		line, tail, _ := strings.Cut(rest, "\n")
		rest = tail
		text := strings.TrimLeft(line, " ")
		if text == "" {
			if line != "" {
				return nil, false // spaces alone may be a block scalar's text
			}
			continue
		}
		if text[0] == '#' {
			if text != line {
				return nil, false // an indented comment may be a block scalar's text
			}
			continue
		}
		if strings.HasSuffix(text, " ") || strings.Contains(text, " #") {
			return nil, false
		}
		r.lines = append(r.lines, yline{num: num, indent: len(line) - len(text), text: text})
	}
	if len(r.lines) == 0 || r.lines[0].indent != 0 {
		return nil, false
	}
	root, ok := r.block(0)
	if !ok || r.i != len(r.lines) {
		return nil, false
	}
	return root, true
}

// block reads the mapping or sequence that starts at the current line,
// whose indentation is indent.
func (r *blockReader) block(indent int) (*yaml.Node, bool) {
	if r.depth++; r.depth > maxBlockDepth {
		return nil, false
	}
	defer func() { r.depth-- }()
	if isItem(r.lines[r.i].text) {
		return r.sequence(indent)
	}
	return r.mapping(indent)
}

func isItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// mapping reads the entries at indentation indent.
func (r *blockReader) mapping(indent int) (*yaml.Node, bool) {
	m := r.node(yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: r.lines[r.i].num, Column: indent + 1})
	for r.i < len(r.lines) && r.lines[r.i].indent == indent && !isItem(r.lines[r.i].text) {
		l := r.lines[r.i]
		key, rest, found := strings.Cut(l.text, ":")
		if !found || (rest != "" && rest[0] != ' ') {
			return nil, false
		}
		k, ok := r.scalar(key, l.num, indent)
		if !ok || k.Tag != "!!str" || strings.HasSuffix(key, " ") || len(key) > 1024 { // yaml.v3's longest simple key
			return nil, false
		}
		r.i++
		v, ok := r.value(strings.TrimPrefix(rest, " "), l, indent)
		if !ok {
			return nil, false
		}
		m.Content = append(m.Content, k, v)
	}
	if r.i < len(r.lines) && r.lines[r.i].indent > indent {
		return nil, false
	}
	return m, true
}

// value reads the value of a key on line l at indentation indent: rest
// is what follows the key's colon.
func (r *blockReader) value(rest string, l yline, indent int) (*yaml.Node, bool) {
	switch {
	case rest == ">-":
		return r.folded(l, indent)
	case rest != "":
		return r.scalar(rest, l.num, l.indent+len(l.text)-len(rest))
	case r.i == len(r.lines):
		return nil, false // an empty value: null, which yaml.v3 places itself
	case r.lines[r.i].indent > indent:
		return r.block(r.lines[r.i].indent)
	case r.lines[r.i].indent == indent && isItem(r.lines[r.i].text):
		return r.sequence(indent)
	}
	return nil, false
}

// folded reads a ">-" scalar: the more indented lines that follow, all at
// one indentation, joined with spaces.
func (r *blockReader) folded(l yline, indent int) (*yaml.Node, bool) {
	if r.i == len(r.lines) || r.lines[r.i].indent <= indent {
		return nil, false
	}
	in, first := r.lines[r.i].indent, r.lines[r.i].num
	if first != l.num+1 {
		return nil, false // leading blank lines are text of their own
	}
	var parts []string
	for r.i < len(r.lines) && r.lines[r.i].indent > indent {
		if r.lines[r.i].indent != in || r.lines[r.i].num != first+len(parts) {
			return nil, false // more indented lines, or blank lines, fold otherwise
		}
		parts = append(parts, r.lines[r.i].text)
		r.i++
	}
	return r.node(yaml.Node{Kind: yaml.ScalarNode, Style: yaml.FoldedStyle, Tag: "!!str", Value: strings.Join(parts, " "),
		Line: l.num, Column: l.indent + len(l.text) - 1}), true
}

// sequence reads the items at indentation indent.
func (r *blockReader) sequence(indent int) (*yaml.Node, bool) {
	s := r.node(yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: r.lines[r.i].num, Column: indent + 1})
	for r.i < len(r.lines) && r.lines[r.i].indent == indent && isItem(r.lines[r.i].text) {
		l := r.lines[r.i]
		rest := strings.TrimPrefix(l.text[1:], " ")
		if rest == "" || isItem(rest) {
			return nil, false
		}
		var item *yaml.Node
		var ok bool
		if key, _, found := strings.Cut(rest, ":"); found && !strings.ContainsAny(key, " ") {
			// "- key: ...": a mapping whose first entry is on this line,
			// indented as if the dash were a space.
			r.lines[r.i] = yline{num: l.num, indent: indent + 2, text: rest}
			item, ok = r.mapping(indent + 2)
		} else {
			item, ok = r.scalar(rest, l.num, indent+2)
			r.i++
		}
		if !ok {
			return nil, false
		}
		s.Content = append(s.Content, item)
	}
	if r.i < len(r.lines) && r.lines[r.i].indent > indent {
		return nil, false
	}
	return s, true
}

// scalar is the plain scalar text at line and 0-based column col, when
// yaml.v3 would read it as a string or a decimal integer; false for
// anything else.
func (r *blockReader) scalar(text string, line, col int) (*yaml.Node, bool) {
	var tag string
	switch {
	case text == "":
		return nil, false
	case isDecimal(text):
		tag = "!!int"
	case plainWord(text):
		tag = "!!str"
	default:
		return nil, false
	}
	return r.node(yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: text, Line: line, Column: col + 1}), true
}

// isDecimal reports an unsigned decimal without a leading zero.
func isDecimal(s string) bool {
	if s == "0" {
		return true
	}
	if len(s) > 18 || s[0] < '1' || s[0] > '9' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// plainWord reports a scalar that starts with a letter, holds only
// letters, digits and the characters of hostlists and IDs, and is none
// of the words YAML resolves to null or a boolean.
func plainWord(s string) bool {
	if c := s[0]; (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && strings.IndexByte("-_.[],/ =+@()", c) < 0 {
			return false
		}
	}
	switch strings.ToLower(s) {
	case "null", "true", "false", "y", "yes", "n", "no", "on", "off":
		return false
	}
	return true
}
