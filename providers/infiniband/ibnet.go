package infiniband

import (
	"errors"
	"fmt"
)

// Sentinel errors of Parse, wrapped in a *ParseError or joined.
var (
	// ErrSyntax means a line of the output does not follow the
	// ibnetdiscover grammar (garbled or cut in the middle).
	ErrSyntax = errors.New("malformed ibnetdiscover output")
	// ErrTruncated means the output ends before it is complete: a record
	// without its node line, or a cable to a node that has no record.
	ErrTruncated = errors.New("incomplete ibnetdiscover output")
	// ErrInconsistent means two parts of the output contradict each other
	// (a cable seen differently from its two ends, a node described twice
	// differently).
	ErrInconsistent = errors.New("inconsistent ibnetdiscover output")
	// ErrNoSwitches means the output holds no switch at all.
	ErrNoSwitches = errors.New("ibnetdiscover output holds no switch")
)

// ParseError is a problem at one line of ibnetdiscover output.
type ParseError struct {
	// Source names the output: a file path or the command that printed it.
	Source string
	// Line is the 1-based line number.
	Line int
	// Text is the line (cut to 120 bytes), for a caller that shows it to
	// the operator deliberately; Error never quotes it, since the output
	// may not be ibnetdiscover's at all (a mistyped path names any file).
	Text string
	// Err says what is wrong; it wraps one of the sentinel errors.
	Err error
}

// Error implements error.
func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: %v", e.Source, e.Line, e.Err)
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// NodeType is the kind of an InfiniBand node.
type NodeType uint8

// Node types, as ibnetdiscover prints them.
const (
	// Switch is a switch ("Switch", IDs "S-<guid>").
	Switch NodeType = iota + 1
	// CA is a channel adapter, an HCA ("Ca", IDs "H-<guid>").
	CA
	// Router is a router ("Rt", IDs "R-<guid>").
	Router
)

// String returns the record keyword of the type.
func (t NodeType) String() string {
	switch t {
	case Switch:
		return "Switch"
	case CA:
		return "Ca"
	case Router:
		return "Rt"
	default:
		return fmt.Sprintf("NodeType(%d)", uint8(t))
	}
}

// prefix is the letter of the type in node IDs ("S-…").
func (t NodeType) prefix() byte {
	switch t {
	case Switch:
		return 'S'
	case CA:
		return 'H'
	default:
		return 'R'
	}
}

func typeOfPrefix(c byte) (NodeType, bool) {
	switch c {
	case 'S':
		return Switch, true
	case 'H':
		return CA, true
	case 'R':
		return Router, true
	}
	return 0, false
}

// Node is one node record of ibnetdiscover output.
type Node struct {
	// Type is the kind of node.
	Type NodeType
	// GUID is the node GUID.
	GUID uint64
	// SysImageGUID, VendorID and DeviceID come from the record header;
	// 0 when absent.
	SysImageGUID uint64
	VendorID     uint32
	DeviceID     uint32
	// Ports is the number of ports the node line declares.
	Ports int
	// Description is the NodeDescription (for an HCA usually
	// "<hostname> <hca>", for a managed switch "MF0;<name>:<model>/U1").
	Description string
	// Line is where the node line is.
	Line int
	// Mapped marks a node that a node-name-map named: its Description
	// is the mapped name.
	Mapped bool
	// Links are the connected ports, in input order.
	Links []Link
}

// Link is one connected port of a node: a cable.
type Link struct {
	// Port is the local port number.
	Port int
	// PortGUID is the local port GUID (printed for CA ports); 0 if absent.
	PortGUID uint64
	// PeerType, PeerGUID and PeerPort name the other end.
	PeerType NodeType
	PeerGUID uint64
	PeerPort int
	// PeerPortGUID is printed when the peer is not a switch; 0 if absent.
	PeerPortGUID uint64
	// PeerDescription is the peer's NodeDescription as printed.
	PeerDescription string
	// Width is the number of lanes (1, 2, 4, 8, 12); 0 when unknown.
	Width int
	// Speed is the lane speed name: SDR, DDR, QDR, FDR10, FDR, EDR, HDR,
	// NDR, XDR; empty when unknown.
	Speed string
	// Line is where the port line is.
	Line int
}

// laneTenthsGbps returns the nominal data rate of one lane of a speed, in
// tenths of Gb/s.
func laneTenthsGbps(speed string) (uint32, bool) {
	switch speed {
	case "SDR":
		return 25, true
	case "DDR":
		return 50, true
	case "QDR", "FDR10":
		return 100, true
	case "FDR":
		return 140, true
	case "EDR":
		return 250, true
	case "HDR":
		return 500, true
	case "NDR":
		return 1000, true
	case "XDR":
		return 2000, true
	}
	return 0, false
}

// Gbps returns the nominal data rate of the cable (4xNDR: 400); 0 when
// the width or speed is unknown.
func (l Link) Gbps() uint32 {
	lane, ok := laneTenthsGbps(l.Speed)
	if !ok || l.Width <= 0 {
		return 0
	}
	return (uint32(l.Width)*lane + 5) / 10
}

// Topology is parsed ibnetdiscover output.
type Topology struct {
	// Nodes are the records in input order; a node printed several times
	// (concatenated outputs of several fabric segments) appears once, with
	// the union of its links.
	Nodes []Node
	// Skipped are the numbers of the lines that belong to no record,
	// before the first record or after the last (a pasted shell prompt,
	// a terminal log's banner, a message of ibnetdiscover on stderr):
	// they were left out.
	Skipped []int
	index   map[uint64]int
}

// Node returns the node with the given GUID.
func (t *Topology) Node(guid uint64) (*Node, bool) {
	i, ok := t.index[guid]
	if !ok {
		return nil, false
	}
	return &t.Nodes[i], true
}

// FormatGUID prints a GUID as ibnetdiscover does in node IDs: 16 hex
// digits.
func FormatGUID(g uint64) string { return fmt.Sprintf("%016x", g) }
