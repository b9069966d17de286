package neighbor_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers/lldp/neighbor"
)

// tlv encodes one TLV.
func tlv(typ int, v ...byte) []byte {
	h := make([]byte, 2)
	binary.BigEndian.PutUint16(h, uint16(typ<<9|len(v)))
	return append(h, v...)
}

// frame is an Ethernet header for LLDP and the TLVs.
func frame(tlvs ...[]byte) []byte {
	f := []byte{0x01, 0x80, 0xc2, 0, 0, 0x0e, 2, 0, 0, 0, 0, 1, 0x88, 0xcc}
	for _, t := range tlvs {
		f = append(f, t...)
	}
	return f
}

var (
	chassisMAC = tlv(1, 4, 0x0c, 0x42, 0xa1, 0, 0, 1)
	portName   = tlv(2, 5, 's', 'w', 'p', '1', '7')
	ttl        = tlv(3, 0, 120)
	end        = tlv(0)
)

func TestParseFrame(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		frame   []byte
		want    string // SysName/PortDescr/ChassisID/PortID
		warning string
		err     bool
	}{
		{"minimal", frame(chassisMAC, portName, ttl, end), "//0c:42:a1:00:00:01/swp17", "", false},
		{"names and a management address", frame(chassisMAC, portName, ttl, tlv(4, []byte("rail 0")...), tlv(5, []byte("leaf01")...),
			tlv(8, 5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 1, 0), end), "leaf01/rail 0/0c:42:a1:00:00:01/swp17", "", false},
		{"padding after End", append(frame(chassisMAC, portName, ttl, end), make([]byte, 20)...), "//0c:42:a1:00:00:01/swp17", "", false},
		{"oversized system name", frame(chassisMAC, portName, ttl, tlv(5, []byte(strings.Repeat("x", 200))...), end), "//0c:42:a1:00:00:01/swp17", "system name: 200 bytes", false},
		{"control characters in a name", frame(chassisMAC, portName, ttl, tlv(5, 'a', 0, 'b'), end), "//0c:42:a1:00:00:01/swp17", "not printable", false},
		{"garbled management address", frame(chassisMAC, portName, ttl, tlv(8, 9, 1, 10), end), "//0c:42:a1:00:00:01/swp17", "management address", false},
		{"MAC of 3 bytes", frame(tlv(1, 4, 1, 2, 3), portName, ttl, end), "", "chassis ID: a MAC address of 3 bytes", true},
		{"TLV past the end", frame(chassisMAC, portName, ttl, []byte{0x0a, 0xff, 'x'}), "", "", true},
		{"no End TLV", frame(chassisMAC, portName, ttl), "", "", true},
		{"port ID first", frame(portName, chassisMAC, ttl, end), "", "", true},
		{"TTL of 3 bytes", frame(chassisMAC, portName, tlv(3, 0, 0, 1), end), "", "", true},
		{"not LLDP", []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x08, 0x00, 0, 0}, "", "", true},
		{"too short", []byte{1, 2}, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n, warnings, err := neighbor.ParseFrame("eth0", tt.frame)
			if (err != nil) != tt.err || (err != nil && !errors.Is(err, neighbor.ErrFrame)) {
				t.Fatalf("ParseFrame = %+v, %v; want error %v", n, err, tt.err)
			}
			if tt.warning != "" && !strings.Contains(strings.Join(warnings, "; "), tt.warning) {
				t.Errorf("warnings %q lack %q", warnings, tt.warning)
			}
			if tt.warning == "" && len(warnings) > 0 {
				t.Errorf("unexpected warnings %q", warnings)
			}
			if got := n.SysName + "/" + n.PortDescr + "/" + n.ChassisID + "/" + n.PortID; !tt.err && got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	n, _, _ := neighbor.ParseFrame("eth0", frame(chassisMAC, portName, ttl, tlv(8, 5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 1, 0), end))
	if len(n.MgmtIPs) != 1 || n.MgmtIPs[0] != "10.0.0.1" || n.ChassisIDType != "mac" || n.PortIDType != "ifname" {
		t.Errorf("parsed %+v", n)
	}
}

// FuzzParseFrame: no frame panics the parser, and a neighbor it accepts
// has IDs and only bounded, printable values.
func FuzzParseFrame(f *testing.F) {
	f.Add(frame(chassisMAC, portName, ttl, tlv(5, []byte("leaf01")...), end))
	f.Add(frame(chassisMAC, portName, ttl, tlv(8, 5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 1, 0), end))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, _, err := neighbor.ParseFrame("eth0", data)
		if err != nil {
			return
		}
		if n.ChassisID == "" || n.PortID == "" || len(n.MgmtIPs) > neighbor.MaxMgmtIPs {
			t.Fatalf("accepted %+v", n)
		}
		for _, v := range []string{n.ChassisID, n.PortID, n.SysName, n.PortDescr, n.ChassisIDType, n.PortIDType} {
			if len(v) > neighbor.MaxField {
				t.Fatalf("accepted a value of %d bytes", len(v))
			}
			for i := 0; i < len(v); i++ {
				if v[i] < ' ' || v[i] >= 0x7f {
					t.Fatalf("accepted %q", v)
				}
			}
		}
	})
}
