package infiniband

import (
	"errors"
	"fmt"

	"github.com/toposcope/toposcope/internal/config"
)

// check verifies that every cable is reported by both of its ends and
// that every node a cable names has a record.
func (t *Topology) check(source string) error {
	var errs []error
	extra := 0
	add := func(line int, sentinel error, format string, args ...any) {
		if len(errs) == maxParseErrors {
			extra++
			return
		}
		errs = append(errs, &ParseError{Source: source, Line: line, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))})
	}
	switches := 0
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.Type == Switch {
			switches++
		}
		for _, l := range n.Links {
			peer, ok := t.Node(l.PeerGUID)
			switch {
			case !ok:
				add(l.Line, ErrTruncated, "port %d of %s is cabled to %c-%s, which has no record (output cut short?)",
					l.Port, t.label(n), l.PeerType.prefix(), FormatGUID(l.PeerGUID))
			case peer.Type != l.PeerType:
				add(l.Line, ErrInconsistent, "port %d of %s names %c-%s, which is a %s",
					l.Port, t.label(n), l.PeerType.prefix(), FormatGUID(l.PeerGUID), peer.Type)
			default:
				back, found := peer.link(l.PeerPort)
				switch {
				case !found:
					add(l.Line, ErrTruncated, "port %d of %s is cabled to port %d of %s, whose record (line %d) lacks that port (output cut short?)",
						l.Port, t.label(n), l.PeerPort, t.label(peer), peer.Line)
				case back.PeerGUID != n.GUID || back.PeerPort != l.Port:
					add(l.Line, ErrInconsistent, "port %d of %s is cabled to port %d of %s, which reports %c-%s[%d] (line %d)",
						l.Port, t.label(n), l.PeerPort, t.label(peer), back.PeerType.prefix(), FormatGUID(back.PeerGUID), back.PeerPort, back.Line)
				}
			}
		}
	}
	if len(errs) == 0 && switches == 0 {
		return fmt.Errorf("%s: %w (%d nodes)", source, ErrNoSwitches, len(t.Nodes))
	}
	if extra > 0 {
		errs = append(errs, &config.MoreProblems{N: extra})
	}
	return errors.Join(errs...)
}

// link returns the link of port p.
func (n *Node) link(p int) (Link, bool) {
	for _, l := range n.Links {
		if l.Port == p {
			return l, true
		}
	}
	return Link{}, false
}

// label names a node in messages: `S-<guid> ("<description>")`.
func (t *Topology) label(n *Node) string {
	return fmt.Sprintf("%c-%s (%q)", n.Type.prefix(), FormatGUID(n.GUID), n.Description)
}
