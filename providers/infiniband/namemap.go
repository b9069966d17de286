package infiniband

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// ErrNameMap is wrapped by the errors of a node-name-map file.
var ErrNameMap = errors.New("bad node-name-map")

// NameMap is OpenSM's node-name-map (what `ibnetdiscover --node-name-map`
// reads): node GUID to node name.
type NameMap map[uint64]string

// ParseNameMap reads a node-name-map file: one `<node GUID> "<name>"`
// per line (the GUID hex, 0x optional; the name quoted, or the rest of
// the line), blank lines and # comments skipped. A GUID mapped twice to
// different names, a bad GUID or an empty name is an error naming the
// line; source names the file in errors.
func ParseNameMap(data []byte, source string) (NameMap, error) {
	m := NameMap{}
	at := map[uint64]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if text == "" || text[0] == '#' {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %w: %s", source, line, ErrNameMap, fmt.Sprintf(format, args...))
		}
		field, rest, _ := strings.Cut(text, " ")
		if f, r, ok := strings.Cut(text, "\t"); ok && len(f) < len(field) {
			field, rest = f, r
		}
		guid, err := parseHex([]byte(field), 64)
		if err != nil {
			return nil, bad("want a node GUID first, got %q", field)
		}
		name, err := nameOf(strings.TrimSpace(rest))
		if err != nil {
			return nil, bad("%v", err)
		}
		if old, dup := m[guid]; dup && old != name {
			return nil, bad("GUID %s is mapped to %q at line %d and to %q here", FormatGUID(guid), old, at[guid], name)
		}
		m[guid], at[guid] = name, line
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", source, ErrNameMap, err)
	}
	return m, nil
}

// nameOf reads the name after a GUID: quoted (OpenSM's form), or the
// rest of the line.
func nameOf(rest string) (string, error) {
	name := rest
	if strings.HasPrefix(rest, `"`) {
		end := strings.LastIndexByte(rest, '"')
		if end == 0 {
			return "", errors.New("unterminated quoted name")
		}
		name = rest[1:end]
		if tail := strings.TrimSpace(rest[end+1:]); tail != "" && tail[0] != '#' {
			return "", fmt.Errorf("text after the quoted name: %q", tail)
		}
	}
	if name = strings.TrimSpace(name); name == "" {
		return "", errors.New("no name after the GUID")
	}
	if strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", fmt.Errorf("the name %q has control characters", name)
	}
	return name, nil
}

// apply names the nodes of t as ibnetdiscover --node-name-map would: a
// node whose GUID is mapped, and every cable's end at it, gets the
// mapped name as its description, and is marked Mapped (a mapped name
// may be a host's name alone: Naming.HostOnly).
func (m NameMap) apply(t *Topology) {
	if len(m) == 0 {
		return
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if name, ok := m[n.GUID]; ok {
			n.Description, n.Mapped = name, true
		}
		for j := range n.Links {
			if name, ok := m[n.Links[j].PeerGUID]; ok {
				n.Links[j].PeerDescription = name
			}
		}
	}
}
