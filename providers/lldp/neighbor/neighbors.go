// Package neighbor reads what LLDP says of a host's links: for each of its
// NICs, the switch at the other end (its chassis ID and system name) and
// the port. It parses lldpd's own view, `lldpcli -f json0 show
// neighbors`, the format whose fields are arrays at every count (plain
// `-f json` turns a one-element array into an object).
package neighbor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/providers"
)

// ErrFormat is wrapped when lldpcli's output is not the json0 shape.
var ErrFormat = errors.New("lldpcli output")

// Neighbor is the switch one NIC of the host sees, as its LLDP frames
// say: the agent reports it as it is.
type Neighbor = providers.LLDPNeighbor

// Bounds of one host's neighbors: what no real host exceeds, so that a
// garbled or hostile output cannot grow a report without end.
const (
	// MaxNeighbors is the most neighbors a host reports.
	MaxNeighbors = 64
	// MaxField is the longest value of a neighbor field (LLDP allows 255
	// bytes; no switch seen names itself or a port at half of it).
	MaxField = 128
	// MaxMgmtIPs is the most management addresses kept for a neighbor.
	MaxMgmtIPs = 2
)

// chassisJSON and portJSON are a neighbor's switch and port in json0.
type chassisJSON struct {
	ID         []typedValue `json:"id"`
	Name       []typedValue `json:"name"`
	MgmtIP     []typedValue `json:"mgmt-ip"`
	Capability []capability `json:"capability"`
}

// capability is one capability lldpcli lists: its name (Bridge, Router)
// and whether it is enabled.
type capability struct {
	Type    string `json:"type"`
	Enabled bool   `json:"enabled"`
}

type portJSON struct {
	ID    []typedValue `json:"id"`
	Descr []typedValue `json:"descr"`
}

type typedValue struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Parse reads `lldpcli show neighbors` as JSON: the json0 format
// (arrays at every count; also what Cumulus's `net show lldp json`
// prints) or plain `-f json` (objects keyed by interface and system name,
// a list only when there are several). A byte-order mark, lines before the
// JSON (a shell prompt, the command saved with its output) and text after
// it are skipped. A neighbor without a chassis ID or a port ID, or with a
// field past the bounds, is left out and named in the warnings; output
// that is neither shape is an error.
func Parse(data []byte) ([]Neighbor, []string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if i := jsonStart(data); i >= 0 {
		data = data[i:]
	}
	var top struct {
		LLDP json.RawMessage `json:"lldp"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&top); err != nil {
		return nil, nil, fmt.Errorf("%w: not lldpcli's JSON: %w", ErrFormat, err)
	}
	ifcs, err := interfacesOf(bytes.TrimSpace(top.LLDP))
	if err != nil {
		return nil, nil, err
	}
	var out []Neighbor
	var warnings []string
	for _, ifc := range ifcs {
		n, why := neighborOf(ifc.Name, ifc.Via, ifc.Chassis, ifc.Port)
		switch {
		case why != "":
			warnings = append(warnings, fmt.Sprintf("interface %q: %s: left out", clip(ifc.Name), why))
		case len(out) == MaxNeighbors:
			warnings = append(warnings, fmt.Sprintf("interface %q: more than %d neighbors: left out", clip(ifc.Name), MaxNeighbors))
		default:
			out = append(out, n)
		}
	}
	return out, warnings, nil
}

// jsonStart is the offset of the first line that starts with "{", or -1.
func jsonStart(data []byte) int {
	for off := 0; off < len(data); {
		line := data[off:]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j+1]
		}
		if t := bytes.TrimLeft(line, " \t\r"); len(t) > 0 && t[0] == '{' {
			return off + len(line) - len(t)
		}
		off += len(line)
	}
	return -1
}

// ifaceJSON is one interface's neighbor in json0's shape.
type ifaceJSON struct {
	Name    string        `json:"name"`
	Via     string        `json:"via"`
	Chassis []chassisJSON `json:"chassis"`
	Port    []portJSON    `json:"port"`
}

// interfacesOf reads the "lldp" value: json0's list, or plain json's
// object.
func interfacesOf(lldp []byte) ([]ifaceJSON, error) {
	switch {
	case len(lldp) == 0 || string(lldp) == "null":
		return nil, fmt.Errorf("%w: no \"lldp\" value", ErrFormat)
	case lldp[0] == '[':
		var doc []struct {
			Interface []ifaceJSON `json:"interface"`
		}
		if err := json.Unmarshal(lldp, &doc); err != nil {
			return nil, fmt.Errorf("%w: json0: %w", ErrFormat, err)
		}
		var out []ifaceJSON
		for _, l := range doc {
			out = append(out, l.Interface...)
		}
		return out, nil
	}
	return plainInterfaces(lldp)
}

// neighborOf builds one neighbor, or says why it cannot.
func neighborOf(name, via string, chassis []chassisJSON, port []portJSON) (Neighbor, string) {
	if via != "" && via != "LLDP" {
		return Neighbor{}, fmt.Sprintf("learnt by %q, not LLDP", clip(via))
	}
	if len(chassis) == 0 || len(chassis[0].ID) == 0 || chassis[0].ID[0].Value == "" {
		return Neighbor{}, "no chassis ID"
	}
	if len(port) == 0 || len(port[0].ID) == 0 || port[0].ID[0].Value == "" {
		return Neighbor{}, "no port ID"
	}
	c, p := chassis[0], port[0]
	n := Neighbor{Interface: name, ChassisID: c.ID[0].Value, ChassisIDType: c.ID[0].Type, PortID: p.ID[0].Value, PortIDType: p.ID[0].Type}
	if len(c.Name) > 0 {
		n.SysName = c.Name[0].Value
	}
	if len(p.Descr) > 0 {
		n.PortDescr = p.Descr[0].Value
	}
	for _, ip := range c.MgmtIP {
		if len(n.MgmtIPs) < MaxMgmtIPs && ip.Value != "" {
			n.MgmtIPs = append(n.MgmtIPs, ip.Value)
		}
	}
	for _, c := range c.Capability {
		if name := strings.ToLower(c.Type); c.Enabled && slices.Contains(Capabilities[:], name) && !slices.Contains(n.Capabilities, name) {
			n.Capabilities = append(n.Capabilities, name)
		}
	}
	for _, f := range append([]string{n.Interface, n.ChassisID, n.ChassisIDType, n.SysName, n.PortID, n.PortIDType, n.PortDescr}, n.MgmtIPs...) {
		if len(f) > MaxField || !PrintableASCII(f) {
			return Neighbor{}, fmt.Sprintf("a field of %d bytes, or not printable ASCII (at most %d)", len(f), MaxField)
		}
	}
	if n.Interface == "" {
		return Neighbor{}, "no interface name"
	}
	return n, ""
}

// Capabilities are the LLDP system capabilities, in the order of their
// bits (802.1AB), as lldpcli names them in lower case.
var Capabilities = [...]string{"other", "repeater", "bridge", "wlan", "router", "telephone", "docsis", "station"}

// PrintableASCII reports whether v is printable ASCII (spaces allowed):
// what a neighbor's values may hold.
func PrintableASCII(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// clip cuts a name for a warning.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
