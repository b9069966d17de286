package neighbor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// EtherType is LLDP's Ethernet type.
const EtherType = 0x88cc

// ErrFrame is wrapped when an LLDP frame cannot be read: too short, a
// TLV past the end, or without the TLVs every frame must carry.
var ErrFrame = errors.New("LLDP frame")

// TLV types (IEEE 802.1AB).
const (
	tlvEnd       = 0
	tlvChassisID = 1
	tlvPortID    = 2
	tlvTTL       = 3
	tlvPortDescr = 4
	tlvSysName   = 5
	tlvSysCaps   = 7
	tlvMgmtAddr  = 8
)

// Chassis and port ID subtypes, named as lldpcli names them.
var (
	chassisSubtypes = map[byte]string{1: "chassis", 2: "ifalias", 3: "port", 4: "mac", 5: "ip", 6: "ifname", 7: "local"}
	portSubtypes    = map[byte]string{1: "ifalias", 2: "port", 3: "mac", 4: "ip", 5: "ifname", 6: "circuit", 7: "local"}
)

// ParseFrame reads the LLDP frame an interface received (from its
// Ethernet header on) into the neighbor it describes. A TLV whose value
// is out of bounds or garbled (an ID too long, a name not printable, a
// management address that is not one) is left out and named in the
// warnings; a frame without a chassis ID, a port ID and a TTL first, a
// TLV running past the frame's end, or a frame that is not LLDP, is an
// error wrapping ErrFrame.
func ParseFrame(iface string, frame []byte) (Neighbor, []string, error) {
	if len(frame) < 14 || binary.BigEndian.Uint16(frame[12:14]) != EtherType {
		return Neighbor{}, nil, fmt.Errorf("%w: not an LLDP frame (%d bytes)", ErrFrame, len(frame))
	}
	n := Neighbor{Interface: iface}
	var warnings []string
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	data := frame[14:]
	for i := 0; ; i++ {
		if len(data) < 2 {
			return Neighbor{}, nil, fmt.Errorf("%w: ends without an End TLV", ErrFrame)
		}
		h := binary.BigEndian.Uint16(data[:2])
		typ, size := byte(h>>9), int(h&0x1ff)
		if len(data)-2 < size {
			return Neighbor{}, nil, fmt.Errorf("%w: TLV %d (type %d) of %d bytes runs past the frame's end", ErrFrame, i, typ, size)
		}
		v := data[2 : 2+size]
		data = data[2+size:]
		if i < 3 && typ != byte(i+1) { // chassis ID, port ID and TTL come first, in order
			return Neighbor{}, nil, fmt.Errorf("%w: TLV %d is type %d, want %d", ErrFrame, i, typ, i+1)
		}
		switch typ {
		case tlvEnd:
			if n.ChassisID == "" || n.PortID == "" {
				return Neighbor{}, warnings, fmt.Errorf("%w: no usable chassis ID or port ID", ErrFrame)
			}
			return n, warnings, nil
		case tlvChassisID:
			kind, id, why := idValue(v, chassisSubtypes, 4, 5)
			if why != "" {
				warn("chassis ID: %s", why)
			}
			n.ChassisIDType, n.ChassisID = kind, id
		case tlvPortID:
			kind, id, why := idValue(v, portSubtypes, 3, 4)
			if why != "" {
				warn("port ID: %s", why)
			}
			n.PortIDType, n.PortID = kind, id
		case tlvTTL:
			if size != 2 {
				return Neighbor{}, nil, fmt.Errorf("%w: TTL of %d bytes, want 2", ErrFrame, size)
			}
		case tlvPortDescr, tlvSysName:
			s, why := text(v)
			if why != "" {
				warn("%s: %s", map[byte]string{tlvPortDescr: "port description", tlvSysName: "system name"}[typ], why)
				continue
			}
			if typ == tlvSysName {
				n.SysName = s
			} else {
				n.PortDescr = s
			}
		case tlvSysCaps:
			if size != 4 {
				warn("system capabilities: %d bytes, want 4", size)
				continue
			}
			enabled := binary.BigEndian.Uint16(v[2:4])
			for bit, name := range Capabilities {
				if enabled&(1<<bit) != 0 {
					n.Capabilities = append(n.Capabilities, name)
				}
			}
		case tlvMgmtAddr:
			if len(n.MgmtIPs) == MaxMgmtIPs {
				continue
			}
			if ip, ok := mgmtAddr(v); ok {
				n.MgmtIPs = append(n.MgmtIPs, ip)
			} else {
				warn("management address: not an IPv4 or IPv6 address")
			}
		}
	}
}

// idValue reads a chassis or port ID TLV: a subtype byte and the ID, a
// MAC address (subtype mac) as lldpcli prints it, a network address
// (subtype ip) as text, others as printable text.
func idValue(v []byte, subtypes map[byte]string, mac, ip byte) (kind, id, why string) {
	if len(v) < 2 {
		return "", "", "empty"
	}
	kind = subtypes[v[0]]
	if kind == "" {
		kind = fmt.Sprintf("subtype-%d", v[0])
	}
	switch v[0] {
	case mac:
		if len(v) != 7 {
			return kind, "", fmt.Sprintf("a MAC address of %d bytes", len(v)-1)
		}
		parts := make([]string, 6)
		for i, b := range v[1:] {
			parts[i] = fmt.Sprintf("%02x", b)
		}
		return kind, strings.Join(parts, ":"), ""
	case ip:
		if a, ok := mgmtIP(v[1:]); ok {
			return kind, a, ""
		}
		return kind, "", "not an IPv4 or IPv6 address"
	}
	s, why := text(v[1:])
	return kind, s, why
}

// text is a TLV's string when it is printable ASCII within MaxField.
func text(v []byte) (string, string) {
	if len(v) > MaxField {
		return "", fmt.Sprintf("%d bytes, at most %d", len(v), MaxField)
	}
	if !PrintableASCII(string(v)) {
		return "", "not printable ASCII"
	}
	return string(v), ""
}

// mgmtAddr reads a management address TLV: the address string's length,
// then the address family and the address.
func mgmtAddr(v []byte) (string, bool) {
	if len(v) < 1 || int(v[0]) < 2 || len(v) < 1+int(v[0]) {
		return "", false
	}
	return mgmtIP(v[1 : 1+int(v[0])])
}

// mgmtIP reads an address family byte (1 IPv4, 2 IPv6) and the address.
func mgmtIP(v []byte) (string, bool) {
	if len(v) < 1 {
		return "", false
	}
	a, ok := netip.AddrFromSlice(v[1:])
	if !ok || (v[0] == 1 && !a.Is4()) || (v[0] == 2 && !a.Is6()) || (v[0] != 1 && v[0] != 2) {
		return "", false
	}
	return a.String(), true
}
