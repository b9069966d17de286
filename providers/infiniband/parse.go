package infiniband

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxLine is the longest line Parse accepts.
const maxLine = 1 << 20

// maxParseErrors caps how many consistency problems Parse lists.
const maxParseErrors = 10

// Parse reads the default output format of ibnetdiscover (also what
// `ibnetdiscover --load-cache` and the -g/-f variants print): records of
// header lines (vendid=, devid=, sysimgguid=, switchguid=/caguid=/rtguid=),
// a node line (Switch, Ca or Rt) and one line per connected port, separated
// by blank lines, with # comments. Several outputs concatenated (one per
// fabric segment) are merged by GUID.
//
// Every cable must be reported consistently by both of its ends, and every
// node named by a cable must have a record; otherwise the output is
// reported truncated or inconsistent rather than read as a smaller fabric.
//
// Output as saved by people is read too: a byte-order mark, CRLF line
// ends, lines whose tabs a terminal dropped ("Switch36 \"S-…\"#"), and
// lines that belong to no record before the first record or after the
// last (a shell prompt, a terminal log's banner, a message on stderr),
// which are left out and listed in Topology.Skipped. A foreign line
// that a record follows is an error naming its line. ibdiagnet's
// variant, whose switchguid= header holds the system image GUID while
// the Switch line names the node GUID, is read as the Switch line says.
// source names the output in errors.
func Parse(r io.Reader, source string) (*Topology, error) {
	p := &parser{src: source, topo: &Topology{index: map[uint64]int{}}, cur: -1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		p.line++
		b := sc.Bytes()
		if p.line == 1 {
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		}
		if err := p.parseLine(b); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &ParseError{Source: source, Line: p.line + 1, Err: fmt.Errorf("%w: %w", ErrSyntax, err)}
	}
	if p.records == 0 && len(p.topo.Skipped) > 0 {
		return nil, &ParseError{Source: source, Line: p.topo.Skipped[0],
			Err: fmt.Errorf("%w: not an ibnetdiscover line, and no record follows it (%d such lines, no record at all)", ErrSyntax, len(p.topo.Skipped))}
	}
	if p.pending.started {
		return nil, &ParseError{Source: source, Line: p.pending.line,
			Err: fmt.Errorf("%w: record header without a node line at the end of the output", ErrTruncated)}
	}
	if err := p.topo.check(source); err != nil {
		return nil, err
	}
	return p.topo, nil
}

// header is the part of a record before its node line.
type header struct {
	started   bool
	line      int
	vendor    uint32
	device    uint32
	sysImage  uint64
	guid      uint64
	guidType  NodeType
	guidGiven bool
}

type parser struct {
	src     string
	line    int
	topo    *Topology
	cur     int // index of the node whose port lines follow; -1 outside a record
	pending header
	// records counts the record lines read; foreign is the error of the
	// first line after a record that belongs to none, returned if a
	// record line follows it.
	records int
	foreign error
}

func (p *parser) errorf(text []byte, sentinel error, format string, args ...any) error {
	t := string(text)
	if len(t) > 120 {
		t = t[:120] + "..."
	}
	return &ParseError{Source: p.src, Line: p.line, Text: t, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))}
}

func (p *parser) parseLine(raw []byte) error {
	line := bytes.TrimRight(raw, " \t\r")
	trimmed := bytes.TrimLeft(line, " \t\r")
	switch {
	case len(trimmed) == 0:
		p.cur = -1
		return nil
	case trimmed[0] == '#':
		return nil
	}
	if !recordLine(trimmed) {
		return p.foreignLine(line)
	}
	if p.foreign != nil {
		return p.foreign // a record follows the foreign line: it is inside the output
	}
	p.records++
	if trimmed[0] == '[' {
		if p.cur < 0 {
			return p.errorf(line, ErrSyntax, "port line outside a node record")
		}
		return p.portLine(line)
	}
	p.cur = -1
	word, _, _ := bytes.Cut(trimmed, []byte{'='})
	switch {
	case bytes.HasPrefix(trimmed, []byte("Switch")), bytes.HasPrefix(trimmed, []byte("Ca")),
		bytes.HasPrefix(trimmed, []byte("Rt")):
		return p.nodeLine(trimmed)
	case len(word) < len(trimmed):
		return p.headerLine(line, string(word), trimmed[len(word)+1:])
	case bytes.HasPrefix(trimmed, []byte("Chassis ")), bytes.Equal(trimmed, []byte("Non-Chassis Nodes")),
		bytes.HasPrefix(trimmed, []byte("Hostname:")):
		return nil // -g (group by chassis) decorations
	}
	return p.errorf(line, ErrSyntax, "not an ibnetdiscover line")
}

// nodeTypes begin node lines.
var nodeTypes = [][]byte{[]byte("Switch"), []byte("Ca"), []byte("Rt")}

// lowerWord reports whether b is lower-case ASCII letters only.
func lowerWord(b []byte) bool {
	for _, c := range b {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// recordLine reports whether a line (trimmed, not blank or a comment)
// can be part of a record: a header, a node line, a port line or a -g
// decoration.
func recordLine(t []byte) bool {
	if t[0] == '[' {
		return true
	}
	for _, typ := range nodeTypes {
		if rest, ok := bytes.CutPrefix(t, typ); ok && len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t' || rest[0] >= '0' && rest[0] <= '9') {
			return true
		}
	}
	if i := bytes.IndexByte(t, '='); i > 0 && lowerWord(t[:i]) {
		return true // a header, known or not (an unknown one is an error naming it)
	}
	return bytes.HasPrefix(t, []byte("Chassis ")) || bytes.Equal(t, []byte("Non-Chassis Nodes")) || bytes.HasPrefix(t, []byte("Hostname:"))
}

// foreignLine takes a line that belongs to no record: before the first
// record it is skipped; after a record it is skipped if no record line
// follows it (the end of the output), else it is an error naming it.
func (p *parser) foreignLine(line []byte) error {
	p.topo.Skipped = append(p.topo.Skipped, p.line)
	if p.records == 0 {
		return nil
	}
	if p.pending.started {
		return p.errorf(line, ErrSyntax, "not an ibnetdiscover line (a record header is not followed by its Switch, Ca or Rt line)")
	}
	if p.foreign == nil {
		p.foreign = p.errorf(line, ErrSyntax, "not an ibnetdiscover line (a vendid=, devid=, sysimgguid=, switchguid= or caguid= header, a Switch, Ca or Rt line, or a [port] line), and records follow it")
	}
	p.cur = -1
	return nil
}

func (p *parser) headerLine(line []byte, key string, rest []byte) error {
	if !p.pending.started {
		p.pending = header{started: true, line: p.line}
	}
	value, _, _ := bytes.Cut(rest, []byte{'#'})
	value = bytes.TrimSpace(value)
	var err error
	switch key {
	case "vendid", "devid":
		var v uint64
		v, err = parseHex(value, 32)
		if key == "vendid" {
			p.pending.vendor = uint32(v)
		} else {
			p.pending.device = uint32(v)
		}
	case "sysimgguid":
		p.pending.sysImage, err = parseHex(value, 64)
	case "switchguid", "caguid", "rtguid":
		g, _, _ := bytes.Cut(value, []byte{'('})
		p.pending.guid, err = parseHex(g, 64)
		p.pending.guidGiven = true
		p.pending.guidType = map[string]NodeType{"switchguid": Switch, "caguid": CA, "rtguid": Router}[key]
	default:
		return p.errorf(line, ErrSyntax, "unknown header %q", key)
	}
	if err != nil {
		return p.errorf(line, ErrSyntax, "%s: %v", key, err)
	}
	return nil
}

func (p *parser) nodeLine(line []byte) error {
	c := cursor{b: line}
	var typ NodeType
	switch {
	case c.word("Switch"):
		typ = Switch
	case c.word("Ca"):
		typ = CA
	case c.word("Rt"):
		typ = Router
	default:
		return p.errorf(line, ErrSyntax, "unknown node type")
	}
	if !c.space() && !c.digit() { // a terminal log may have dropped the tab
		return p.errorf(line, ErrSyntax, "no port count after %s", typ)
	}
	ports, ok := c.int()
	if !ok || ports <= 0 || ports > 255*32 {
		return p.errorf(line, ErrSyntax, "bad port count")
	}
	c.space()
	idType, guid, err := c.nodeID()
	if err != nil {
		return p.errorf(line, ErrSyntax, "node ID: %v", err)
	}
	if idType != typ {
		return p.errorf(line, ErrSyntax, "%s record with a %s ID", typ, idType)
	}
	desc, _, err := c.comment()
	if err != nil {
		return p.errorf(line, ErrSyntax, "node description: %v", err)
	}
	h := p.pending
	p.pending = header{}
	if h.guidGiven && h.guid != guid && h.guidType == typ && h.guid == h.sysImage {
		h.guid = guid // ibdiagnet: the header's GUID is the system image's
	}
	if h.guidGiven && (h.guid != guid || h.guidType != typ) {
		return p.errorf(line, ErrInconsistent, "node %s-%s follows the header of %s %s (line %d)",
			string(typ.prefix()), FormatGUID(guid), h.guidType, FormatGUID(h.guid), h.line)
	}
	n := Node{Type: typ, GUID: guid, SysImageGUID: h.sysImage, VendorID: h.vendor, DeviceID: h.device,
		Ports: ports, Description: desc, Line: p.line}
	if i, dup := p.topo.index[guid]; dup {
		old := &p.topo.Nodes[i]
		if old.Type != n.Type || old.Description != n.Description || old.Ports != n.Ports {
			return p.errorf(line, ErrInconsistent, "node %s described differently at line %d", FormatGUID(guid), old.Line)
		}
		p.cur = i
		return nil
	}
	p.cur = len(p.topo.Nodes)
	p.topo.index[guid] = p.cur
	p.topo.Nodes = append(p.topo.Nodes, n)
	return nil
}

func (p *parser) portLine(line []byte) error {
	n := &p.topo.Nodes[p.cur]
	c := cursor{b: line}
	c.space()
	l := Link{Line: p.line}
	var ok bool
	if !c.byte('[') {
		return p.errorf(line, ErrSyntax, "no port number")
	}
	if l.Port, ok = c.int(); !ok || !c.byte(']') || l.Port < 1 || l.Port > n.Ports {
		return p.errorf(line, ErrSyntax, "bad local port (the node has %d ports)", n.Ports)
	}
	c.extPort()
	c.space()
	if c.peek('(') {
		if l.PortGUID, ok = c.parenGUID(); !ok {
			return p.errorf(line, ErrSyntax, "bad local port GUID")
		}
		c.space()
	}
	var err error
	if l.PeerType, l.PeerGUID, err = c.nodeID(); err != nil {
		return p.errorf(line, ErrSyntax, "peer node ID: %v", err)
	}
	if !c.byte('[') {
		return p.errorf(line, ErrSyntax, "no peer port")
	}
	if l.PeerPort, ok = c.int(); !ok || !c.byte(']') || l.PeerPort < 1 {
		return p.errorf(line, ErrSyntax, "bad peer port")
	}
	c.extPort()
	c.space()
	if c.peek('(') {
		if l.PeerPortGUID, ok = c.parenGUID(); !ok {
			return p.errorf(line, ErrSyntax, "bad peer port GUID")
		}
	}
	desc, tail, err := c.comment()
	if err != nil {
		return p.errorf(line, ErrSyntax, "peer description: %v", err)
	}
	l.PeerDescription = desc
	if l.Width, l.Speed, err = widthSpeed(tail); err != nil {
		return p.errorf(line, ErrSyntax, "%v", err)
	}
	for _, old := range n.Links {
		if old.Port != l.Port {
			continue
		}
		if old.PeerGUID != l.PeerGUID || old.PeerPort != l.PeerPort {
			return p.errorf(line, ErrInconsistent, "port %d of %s is also cabled to %s[%d] at line %d",
				l.Port, FormatGUID(n.GUID), FormatGUID(old.PeerGUID), old.PeerPort, old.Line)
		}
		return nil // the same cable printed again
	}
	n.Links = append(n.Links, l)
	return nil
}

// widthSpeed reads "lid <n> <width>x<speed> ..." after a peer description.
func widthSpeed(tail string) (int, string, error) {
	f := strings.Fields(tail)
	if len(f) < 3 || f[0] != "lid" {
		return 0, "", errors.New(`no "lid <n> <width><speed>" after the peer description (line cut short?)`)
	}
	if _, err := strconv.ParseUint(f[1], 10, 16); err != nil {
		return 0, "", fmt.Errorf("bad peer lid %q", f[1])
	}
	w, s, ok := strings.Cut(f[2], "x")
	width, err := strconv.Atoi(w)
	if !ok || err != nil || width <= 0 {
		return 0, "", nil // "undefined (…)" and the like: unknown, not garbled
	}
	if _, known := laneTenthsGbps(s); !known {
		s = ""
	}
	return width, s, nil
}

func parseHex(b []byte, bits int) (uint64, error) {
	s := strings.TrimPrefix(strings.TrimPrefix(string(b), "0x"), "0X")
	if s == "" {
		return 0, errors.New("empty value")
	}
	return strconv.ParseUint(s, 16, bits)
}
