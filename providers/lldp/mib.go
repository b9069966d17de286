package lldp

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/toposcope/toposcope/providers/lldp/neighbor"
)

// ErrMIB is wrapped when a switch's LLDP-MIB cannot be used: it lacks
// its own chassis ID (lldpLocChassisId).
var ErrMIB = errors.New("LLDP-MIB")

// LLDP-MIB (IEEE 802.1AB, 1.0.8802.1.1.2) objects the provider reads.
const (
	// OIDLocal is lldpLocalSystemData: the switch's own chassis ID, system
	// name and ports.
	OIDLocal = "1.0.8802.1.1.2.1.3"
	// OIDRemote is lldpRemoteSystemsData: lldpRemTable (each neighbor
	// on each port) and lldpRemManAddrTable (their management
	// addresses).
	OIDRemote = "1.0.8802.1.1.2.1.4"

	oidLocChassisType = OIDLocal + ".1.0"
	oidLocChassisID   = OIDLocal + ".2.0"
	oidLocSysName     = OIDLocal + ".3.0"
	oidLocPort        = OIDLocal + ".7.1."  // lldpLocPortEntry.<column>.<portNum>
	oidRem            = OIDRemote + ".1.1." // lldpRemEntry.<column>.<timeMark>.<localPort>.<index>
	oidRemManAddr     = OIDRemote + ".2.1." // lldpRemManAddrEntry.<column>.<timeMark>.<localPort>.<index>.<subtype>.<len>.<address>
)

// Var is one variable of a walk: its OID (dotted, no leading dot) and
// its value, Bytes for an octet string, Int for an integer.
type Var struct {
	OID   string
	Bytes []byte
	Int   int64
}

// View is what one switch's LLDP-MIB says: the switch and, on each of its
// ports, its neighbors.
type View struct {
	// ChassisID and SysName are the switch's own.
	ChassisID string
	SysName   string
	// Ports maps a local port number to its port ID, as the switch
	// sends it to its neighbors.
	Ports map[int]string
	// Remotes are its neighbors, one per port and neighbor.
	Remotes []Remote
}

// Remote is one row of lldpRemTable.
type Remote struct {
	LocalPort int
	ChassisID string
	PortID    string
	SysName   string
	// Caps are the enabled capabilities (lldpRemSysCapEnabled, BITS:
	// the first octet's most significant bit is other(0)).
	Caps byte
	// Addrs are its management addresses (lldpRemManAddrTable).
	Addrs []netip.Addr
}

// Capability bits of Remote.Caps.
const (
	capBridge  = 0x80 >> 2
	capRouter  = 0x80 >> 4
	capStation = 0x80 >> 7
)

// Switch reports whether the neighbor says it forwards (bridge or
// router): a switch to follow, not an end point.
func (r Remote) Switch() bool { return r.Caps&(capBridge|capRouter) != 0 }

// EndPoint reports whether the neighbor says it is a station only.
func (r Remote) EndPoint() bool { return r.Caps != 0 && !r.Switch() }

// Decode reads a switch's view from the variables of its walks of
// OIDLocal and OIDRemote, in any order. A row with a value that is not
// printable, or longer than neighbor.MaxField, is left out with a
// warning. A walk without lldpLocalSystemData decodes to a view without
// ChassisID (the crawler refuses such a switch with ErrMIB).
func Decode(vars []Var) (*View, []string) {
	v := &View{Ports: map[int]string{}}
	var chassisType int64
	var chassis []byte
	rows := map[string]*rawRemote{}
	ports := map[int]*rawRemote{} // lldpLocPortTable rows, by port number
	var order []string
	var warnings []string
	for _, x := range vars {
		switch {
		case x.OID == oidLocChassisType:
			chassisType = x.Int
		case x.OID == oidLocChassisID:
			chassis = x.Bytes
		case x.OID == oidLocSysName:
			v.SysName = string(x.Bytes)
		case strings.HasPrefix(x.OID, oidLocPort):
			col, idx, ok := column(x.OID[len(oidLocPort):])
			n, err := strconv.Atoi(idx)
			if !ok || err != nil {
				continue
			}
			if ports[n] == nil {
				ports[n] = &rawRemote{}
			}
			ports[n].set(col+4, x) // lldpLocPortIdSubtype and lldpLocPortId sit where lldpRemPortIdSubtype and lldpRemPortId do, 4 columns on
		case strings.HasPrefix(x.OID, oidRem):
			col, idx, ok := column(x.OID[len(oidRem):])
			if !ok {
				continue
			}
			r := rows[idx]
			if r == nil {
				r = &rawRemote{}
				rows[idx] = r
				order = append(order, idx)
			}
			r.set(col, x)
		case strings.HasPrefix(x.OID, oidRemManAddr):
			_, idx, ok := column(x.OID[len(oidRemManAddr):])
			if !ok {
				continue
			}
			key, addr, ok := manAddrIndex(idx)
			if r := rows[key]; ok && r != nil && !slices.Contains(r.addrs, addr) {
				r.addrs = append(r.addrs, addr)
			} else if ok && r == nil {
				rows[key] = &rawRemote{addrs: []netip.Addr{addr}}
				order = append(order, key)
			}
		}
	}
	v.ChassisID = formatID(int(chassisType), chassis, chassisSubtypeMAC, chassisSubtypeNetwork)
	for n, p := range ports {
		if id := formatID(int(p.portType), p.port, portSubtypeMAC, portSubtypeNetwork); id != "" {
			v.Ports[n] = id
		}
	}
	for _, idx := range order {
		r := rows[idx]
		rem, err := r.remote(idx)
		if err != nil {
			warnings = append(warnings, err.Error())
			continue
		}
		v.Remotes = append(v.Remotes, rem)
	}
	return v, warnings
}

// rawRemote is one lldpRemTable row as read.
type rawRemote struct {
	chassisType, portType int64
	chassis, port         []byte
	portDescr, sysName    []byte
	caps                  []byte
	addrs                 []netip.Addr
}

func (r *rawRemote) set(col int, x Var) {
	switch col {
	case 4:
		r.chassisType = x.Int
	case 5:
		r.chassis = x.Bytes
	case 6:
		r.portType = x.Int
	case 7:
		r.port = x.Bytes
	case 8:
		r.portDescr = x.Bytes
	case 9:
		r.sysName = x.Bytes
	case 12:
		r.caps = x.Bytes
	}
}

// remote checks and converts a row indexed timeMark.localPort.index.
func (r *rawRemote) remote(idx string) (Remote, error) {
	parts := strings.Split(idx, ".")
	if len(parts) != 3 {
		return Remote{}, fmt.Errorf("lldpRemTable row %s: bad index", idx)
	}
	port, err := strconv.Atoi(parts[1])
	if err != nil {
		return Remote{}, fmt.Errorf("lldpRemTable row %s: bad index", idx)
	}
	if len(r.chassis) == 0 {
		return Remote{}, fmt.Errorf("lldpRemTable row %s: no lldpRemChassisId", idx)
	}
	out := Remote{
		LocalPort: port,
		ChassisID: formatID(int(r.chassisType), r.chassis, chassisSubtypeMAC, chassisSubtypeNetwork),
		PortID:    formatID(int(r.portType), r.port, portSubtypeMAC, portSubtypeNetwork),
		SysName:   string(r.sysName),
		Addrs:     r.addrs,
	}
	out.Caps = capsOctet(r.caps)
	for _, f := range []struct{ name, v string }{{"lldpRemChassisId", out.ChassisID}, {"lldpRemPortId", out.PortID}, {"lldpRemSysName", out.SysName}} {
		if len(f.v) > neighbor.MaxField || !neighbor.PrintableASCII(f.v) {
			return Remote{}, fmt.Errorf("lldpRemTable row %s: %s is not %d printable ASCII characters", idx, f.name, neighbor.MaxField)
		}
	}
	return out, nil
}

// capsOctet is the first octet of lldpRemSysCapEnabled. Some agents
// (Dell OS10 among them) send the BITS value as net-snmp writes it, text
// such as "28 00 2 4" (the octets in hex, then the numbers of the bits
// set); a value of two or more characters that are all hex digits and
// spaces is read so: as binary it would set bits 10 and above, which
// LLDP does not define.
func capsOctet(b []byte) byte {
	if len(b) >= 2 && strings.Trim(string(b), "0123456789abcdefABCDEF ") == "" {
		first, _, _ := strings.Cut(string(b), " ")
		if v, err := strconv.ParseUint(first, 16, 8); err == nil && len(first) == 2 {
			return byte(v)
		}
	}
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// Subtypes (LldpChassisIdSubtype, LldpPortIdSubtype) whose values are
// binary: a MAC address and a network address (IANA family octet, then
// the address).
const (
	chassisSubtypeMAC     = 4
	chassisSubtypeNetwork = 5
	portSubtypeMAC        = 3
	portSubtypeNetwork    = 4
)

// formatID writes an ID as lldpcli does: a MAC address as lower-case
// hex octets joined by colons, a network address as the address, any
// other printable value as it is, and binary values in hex. A MAC
// address that a switch sends as text ("E4 F0 04 E1 89 18",
// "e4:f0:04:e1:89:18", "e4-f0-..."; Dell OS9 does) is written the same
// way, so that it matches the hosts' view of that switch.
func formatID(subtype int, b []byte, mac, network int) string {
	switch {
	case subtype == mac && len(b) == 6:
		return colonHex(b)
	case subtype == mac && len(b) == 17:
		if m, ok := textMAC(string(b)); ok {
			return colonHex(m)
		}
		return string(b)
	case subtype == network && len(b) == 5 && b[0] == 1:
		return netip.AddrFrom4([4]byte(b[1:])).String()
	case subtype == network && len(b) == 17 && b[0] == 2:
		return netip.AddrFrom16([16]byte(b[1:])).String()
	case neighbor.PrintableASCII(string(b)):
		return string(b)
	}
	return colonHex(b)
}

// textMAC reads six hex octets separated by one space, colon or dash.
func textMAC(s string) ([]byte, bool) {
	out := make([]byte, 0, 6)
	for i := 0; i < len(s); i += 3 {
		if i > 0 && !strings.ContainsRune(" :-", rune(s[i-1])) {
			return nil, false
		}
		v, err := strconv.ParseUint(s[i:i+2], 16, 8)
		if err != nil {
			return nil, false
		}
		out = append(out, byte(v))
	}
	return out, len(out) == 6
}

func colonHex(b []byte) string {
	var s strings.Builder
	for i, c := range b {
		if i > 0 {
			s.WriteByte(':')
		}
		s.WriteString(strconv.FormatUint(uint64(c)>>4, 16))
		s.WriteString(strconv.FormatUint(uint64(c)&15, 16))
	}
	return s.String()
}

// column splits "<column>.<index>" into the column and the index.
func column(s string) (int, string, bool) {
	c, idx, ok := strings.Cut(s, ".")
	n, err := strconv.Atoi(c)
	return n, idx, ok && err == nil && idx != ""
}

// manAddrIndex splits lldpRemManAddrTable's index into the row's
// lldpRemTable index and the address (IPv4 or IPv6).
func manAddrIndex(idx string) (string, netip.Addr, bool) {
	parts := strings.Split(idx, ".")
	if len(parts) < 5 {
		return "", netip.Addr{}, false
	}
	key := strings.Join(parts[:3], ".")
	n, err := strconv.Atoi(parts[4])
	if err != nil || len(parts) != 5+n {
		return "", netip.Addr{}, false
	}
	b := make([]byte, n)
	for i, p := range parts[5:] {
		v, err := strconv.ParseUint(p, 10, 8)
		if err != nil {
			return "", netip.Addr{}, false
		}
		b[i] = byte(v)
	}
	addr, ok := netip.AddrFromSlice(b)
	if !ok || (parts[3] == "1") != addr.Is4() {
		return "", netip.Addr{}, false
	}
	return key, addr, true
}
