package lldp_test

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers/lldp"
	"github.com/toposcope/toposcope/testenv/snmprec"
)

// readWalk reads a saved walk (.snmprec) as the variables a walk of the
// LLDP-MIB returns, in walk order. LibreNMS's recordings keep
// lldpRemSysCapSupported and lldpRemSysCapEnabled (columns 11 and 12)
// as net-snmp's text of the BITS value: that text is turned back into
// the octets the switch sent.
func readWalk(t testing.TB, file string) []lldp.Var {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	recs, err := snmprec.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var vars []lldp.Var
	for _, r := range snmprec.Sort(recs) {
		if strings.HasPrefix(r.OID, lldp.OIDRemote+".1.1.11.") || strings.HasPrefix(r.OID, lldp.OIDRemote+".1.1.12.") {
			if b, ok := snmprec.Bits(string(r.Bytes)); ok {
				r.Bytes = b
			}
		}
		if strings.HasPrefix(r.OID, lldp.OIDLocal+".") || strings.HasPrefix(r.OID, lldp.OIDRemote+".") {
			vars = append(vars, lldp.Var{OID: r.OID, Bytes: r.Bytes, Int: r.Int})
		}
	}
	return vars
}

// remote is what a test checks of one decoded neighbor.
type remote struct {
	port            int
	chassis, portID string
	sysName         string
	isSwitch        bool
	addrs           string
}

func remotes(v *lldp.View) []remote {
	var out []remote
	for _, r := range v.Remotes {
		var addrs []string
		for _, a := range r.Addrs {
			addrs = append(addrs, a.String())
		}
		out = append(out, remote{r.LocalPort, r.ChassisID, r.PortID, r.SysName, r.Switch(), strings.Join(addrs, ",")})
	}
	slices.SortFunc(out, func(a, b remote) int { return a.port - b.port })
	return out
}

// TestDecodeRecordedSwitches decodes the LLDP-MIB of real switches as
// LibreNMS recorded them (testdata/snmp/SOURCE.md): five vendors' agents,
// with their quirks: no lldpLocalSystemData scalars in the recordings,
// non-zero timeMarks, port numbers that are ifIndex values, a MAC
// chassis ID sent as text (Dell OS9), capabilities sent as net-snmp's
// text (Dell OS10), management addresses that are MAC addresses
// (subtype 6, skipped), one neighbor on two ports.
func TestDecodeRecordedSwitches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string
		ports int
		want  []remote
	}{
		{"arista_eos_vrf", 25, []remote{
			{1, "94:18:82:56:f6:80", "47", "switchname2", true, "172.29.173.53"},
			{23, "00:1c:73:b3:af:bb", "Ethernet23", "switchname3", true, "169.254.1.2"},
			{24, "00:1c:73:b3:af:bb", "Ethernet24", "switchname3", true, "169.254.1.2"},
			{97, "00:24:a8:e1:d0:80", "41", "switchname4", true, ""},
		}},
		{"dell-os10", 31, []remote{
			{4, "14:18:77:dd:6f:ca", "Gi1/0/6", "1007-mnt-1", false, ""},
			{612, "4c:d9:8f:fb:1e:fe", "ethernet1/1/25", "1007-lan-2", true, ""},
			{616, "4c:d9:8f:fb:1e:fe", "ethernet1/1/26", "1007-lan-2", true, ""},
			{628, "e4:fc:82:36:23:c0", "517", "core-1", true, ""},
			{632, "f4:8e:38:55:de:f6", "TenGigabitEthernet 1/43", "Not Advertised", false, ""},
		}},
		{"dnos_s4048", 55, []remote{
			{2103301, "e4:f0:04:fb:1f:fb", "fortyGigE 1/50", "abc-cs2", true, ""},
			{2105349, "e4:f0:04:e1:89:18", "fortyGigE 1/53", "abc-ag7", true, ""},
			{2105861, "e4:f0:04:e1:89:18", "fortyGigE 1/54", "abc-ag7", true, ""},
			{9437185, "e4:f0:04:e1:89:18", "ManagementEthernet 1/1", "abc-ag7", true, ""},
		}},
		{"junos_ex4600mp", 385, []remote{
			{994, "00:00:00:0f:4e:40", "518", "core.example.org", true, ""},
			{996, "00:00:00:0f:4e:40", "533", "core.example.org", true, ""},
		}},
		{"nxos_n3k-3064pq", 54, []remote{
			{436404224, "18:e7:28:92:28:78", "Ethernet1/49", "<private>", true, "172.30.192.161"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			v, warnings := lldp.Decode(readWalk(t, filepath.Join("testdata", "snmp", tt.file+".snmprec")))
			if len(warnings) > 0 {
				t.Errorf("warnings: %v", warnings)
			}
			if v.ChassisID != "" {
				t.Errorf("ChassisID = %q, but the recording has no lldpLocChassisId", v.ChassisID)
			}
			if len(v.Ports) != tt.ports {
				t.Errorf("%d local ports, want %d", len(v.Ports), tt.ports)
			}
			if got := remotes(v); !slices.Equal(got, tt.want) {
				t.Errorf("remotes:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestDecodeSavedFatTree decodes the walks the real snmpd served from
// the real lldpd of the lab's switches (testdata/fattree): each switch
// knows itself, and the spine sa0 sees its three leaves (la0, lb0,
// stor1), both cores, and no end point.
func TestDecodeSavedFatTree(t *testing.T) {
	t.Parallel()
	walks, err := filepath.Glob(filepath.Join("testdata", "fattree", "*.snmprec"))
	if err != nil || len(walks) != 13 {
		t.Fatalf("want the 13 switches' walks, got %d (%v)", len(walks), err)
	}
	chassis := map[string]string{}
	views := map[string]*lldp.View{}
	for _, w := range walks {
		name := strings.TrimSuffix(filepath.Base(w), ".snmprec")
		v, warnings := lldp.Decode(readWalk(t, w))
		if len(warnings) > 0 {
			t.Errorf("%s: warnings %v", name, warnings)
		}
		if v.SysName != name || v.ChassisID == "" {
			t.Errorf("%s: decoded as %q, chassis %q", name, v.SysName, v.ChassisID)
		}
		if other, dup := chassis[v.ChassisID]; dup {
			t.Errorf("%s and %s share chassis %s", name, other, v.ChassisID)
		}
		chassis[v.ChassisID] = name
		views[name] = v
	}
	var seen []string
	for _, r := range views["sa0"].Remotes {
		if chassis[r.ChassisID] != r.SysName || !r.Switch() {
			t.Errorf("sa0 sees %+v: chassis of %q, switch %v", r, chassis[r.ChassisID], r.Switch())
		}
		if got := views["sa0"].Ports[r.LocalPort]; got == "" {
			t.Errorf("sa0 port %d has no lldpLocPortId", r.LocalPort)
		}
		// lldpd sends the management bridge's address and its IPv6
		// link-local one.
		if !slices.ContainsFunc(r.Addrs, netip.MustParsePrefix("198.18.0.0/15").Contains) {
			t.Errorf("sa0 neighbor %s has no management address in the lab's network: %v", r.SysName, r.Addrs)
		}
		seen = append(seen, r.SysName)
	}
	slices.Sort(seen)
	if want := []string{"c0", "c1", "la0", "lb0", "stor1"}; !slices.Equal(seen, want) {
		t.Errorf("sa0 sees %v, want %v", seen, want)
	}
	var ends []string
	for _, r := range views["la0"].Remotes {
		if r.EndPoint() {
			ends = append(ends, r.SysName)
		}
	}
	slices.Sort(ends)
	if want := []string{"h1", "h2"}; !slices.Equal(ends, want) {
		t.Errorf("la0's end points = %v, want %v", ends, want)
	}
}

// FuzzDecode adds one arbitrary variable to a real switch's walk: Decode
// never panics, and every neighbor it keeps has printable IDs.
func FuzzDecode(f *testing.F) {
	base := readWalk(f, filepath.Join("testdata", "snmp", "arista_eos_vrf.snmprec"))
	f.Add("1.0.8802.1.1.2.1.4.1.1.5.0.1.2", []byte("e4 f0 04 e1 89 18"), int64(0))
	f.Add("1.0.8802.1.1.2.1.4.1.1.12.0.1.2", []byte("28 00 2 4"), int64(0))
	f.Add("1.0.8802.1.1.2.1.4.2.1.3.0.1.2.2.16.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1", []byte{}, int64(2))
	f.Add("1.0.8802.1.1.2.1.4.1.1.9.0.1.2", []byte{0xff, 0x00}, int64(0))
	f.Fuzz(func(t *testing.T, oid string, b []byte, i int64) {
		vars := append(slices.Clone(base), lldp.Var{OID: oid, Bytes: b, Int: i})
		v, _ := lldp.Decode(vars)
		for _, r := range v.Remotes {
			for _, s := range []string{r.ChassisID, r.PortID, r.SysName} {
				if strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c > 0x7e }) {
					t.Fatalf("kept unprintable %q", s)
				}
			}
		}
	})
}
