package infiniband

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// cursor scans one line of ibnetdiscover output.
type cursor struct {
	b []byte
	i int
}

// word consumes w when it is followed by white space or the end.
func (c *cursor) word(w string) bool {
	rest := c.b[c.i:]
	if !bytes.HasPrefix(rest, []byte(w)) {
		return false
	}
	if len(rest) > len(w) && rest[len(w)] != ' ' && rest[len(w)] != '\t' && (rest[len(w)] < '0' || rest[len(w)] > '9') {
		return false
	}
	c.i += len(w)
	return true
}

// space consumes blanks and reports whether there were any.
func (c *cursor) space() bool {
	start := c.i
	for c.i < len(c.b) && (c.b[c.i] == ' ' || c.b[c.i] == '\t') {
		c.i++
	}
	return c.i > start
}

func (c *cursor) peek(b byte) bool { return c.i < len(c.b) && c.b[c.i] == b }

// digit reports whether a decimal digit comes next.
func (c *cursor) digit() bool { return c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' }

func (c *cursor) byte(b byte) bool {
	if c.peek(b) {
		c.i++
		return true
	}
	return false
}

// int consumes a decimal number of at most 9 digits.
func (c *cursor) int() (int, bool) {
	start := c.i
	for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' && c.i-start < 9 {
		c.i++
	}
	if c.i == start {
		return 0, false
	}
	n, err := strconv.Atoi(string(c.b[start:c.i]))
	return n, err == nil
}

// hex consumes up to 16 hex digits (an optional 0x first).
func (c *cursor) hex() (uint64, bool) {
	if bytes.HasPrefix(c.b[c.i:], []byte("0x")) {
		c.i += 2
	}
	start := c.i
	for c.i < len(c.b) && isHex(c.b[c.i]) && c.i-start < 16 {
		c.i++
	}
	if c.i == start {
		return 0, false
	}
	v, err := strconv.ParseUint(string(c.b[start:c.i]), 16, 64)
	return v, err == nil
}

func isHex(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

// extPort skips an "[ext N]" port mapping (printed with -g).
func (c *cursor) extPort() {
	if !bytes.HasPrefix(c.b[c.i:], []byte("[ext ")) {
		return
	}
	if j := bytes.IndexByte(c.b[c.i:], ']'); j >= 0 {
		c.i += j + 1
	}
}

// parenGUID consumes "(<hex>)".
func (c *cursor) parenGUID() (uint64, bool) {
	if !c.byte('(') {
		return 0, false
	}
	v, ok := c.hex()
	if !ok || !c.byte(')') {
		return 0, false
	}
	return v, true
}

// nodeID consumes a quoted node ID: "S-<guid>", "H-<guid>" or "R-<guid>".
func (c *cursor) nodeID() (NodeType, uint64, error) {
	if !c.byte('"') {
		return 0, 0, errors.New(`want "S-<guid>", "H-<guid>" or "R-<guid>"`)
	}
	if c.i+2 > len(c.b) || c.b[c.i+1] != '-' {
		return 0, 0, errors.New("want a type letter and '-'")
	}
	typ, ok := typeOfPrefix(c.b[c.i])
	if !ok {
		return 0, 0, fmt.Errorf("unknown node type letter %q", c.b[c.i])
	}
	c.i += 2
	guid, ok := c.hex()
	if !ok || !c.byte('"') {
		return 0, 0, errors.New("bad GUID")
	}
	return typ, guid, nil
}

// comment consumes `# ... "<description>" <tail>` and returns the
// description (between the first and the last double quote, so that a
// description holding quotes survives) and the text after it.
func (c *cursor) comment() (desc, tail string, err error) {
	c.space()
	if !c.byte('#') {
		return "", "", errors.New("no # comment with the node description")
	}
	rest := c.b[c.i:]
	c.i = len(c.b)
	first := bytes.IndexByte(rest, '"')
	last := bytes.LastIndexByte(rest, '"')
	if first < 0 || first == last {
		return "", "", errors.New("unterminated quoted description")
	}
	return string(rest[first+1 : last]), string(rest[last+1:]), nil
}
