package neighbor_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/providers/lldp/neighbor"
	"github.com/toposcope/toposcope/testenv/netlab"
)

// TestNeighborsFromRealLLDPD cables two hosts to two leaves (host h1 on
// both rails, h2 on the first) in network namespaces, runs the real lldpd
// in each, and reads each host's `lldpcli -f json0 show neighbors`: every
// NIC names the leaf and the port it is cabled to, and one leaf has one
// chassis ID whichever host sees it.
func TestNeighborsFromRealLLDPD(t *testing.T) {
	t.Parallel()
	lab := netlab.New(t)
	lab.Link("h1", "eth0", "leaf01", "swp1")
	lab.Link("h1", "eth1", "leaf02", "swp1")
	lab.Link("h2", "eth0", "leaf01", "swp2")
	for _, n := range []string{"leaf01", "leaf02", "h1", "h2"} {
		lab.LLDPD(t.Context(), n, n)
	}
	want := map[string]map[string]string{
		"h1": {"eth0": "leaf01/swp1", "eth1": "leaf02/swp1"},
		"h2": {"eth0": "leaf01/swp2"},
	}
	chassis := map[string]string{}
	for host, nics := range want {
		var got []neighbor.Neighbor
		deadline := time.Now().Add(30 * time.Second)
		for len(got) < len(nics) {
			if time.Now().After(deadline) {
				t.Fatalf("%s sees %d neighbors after 30 s, want %d", host, len(got), len(nics))
			}
			time.Sleep(100 * time.Millisecond)
			out, err := lab.LLDPCLI(t.Context(), host, "-f", "json0", "show", "neighbors")
			if err != nil {
				t.Fatal(err)
			}
			var warnings []string
			if got, warnings, err = neighbor.Parse(out); err != nil || len(warnings) > 0 {
				t.Fatalf("%s: %v %v\n%s", host, err, warnings, out)
			}
		}
		for _, n := range got {
			if w := nics[n.Interface]; w != n.SysName+"/"+n.PortDescr || n.PortID == "" || n.ChassisID == "" {
				t.Errorf("%s %s sees %+v, want %s", host, n.Interface, n, w)
			}
			if c, ok := chassis[n.SysName]; ok && c != n.ChassisID {
				t.Errorf("%s has chassis ID %s from %s, %s from another host", n.SysName, n.ChassisID, host, c)
			}
			chassis[n.SysName] = n.ChassisID
		}
	}
}

// TestParse: what is kept and what is refused.
func TestParse(t *testing.T) {
	t.Parallel()
	one := func(ifc, chassisID, portID, name string) string {
		return fmt.Sprintf(`{"name":%q,"via":"LLDP","chassis":[{"id":[{"type":"mac","value":%q}],"name":[{"value":%q}]}],"port":[{"id":[{"type":"ifname","value":%q}],"descr":[{"value":"d"}]}]}`,
			ifc, chassisID, name, portID)
	}
	doc := func(ifcs ...string) string {
		return "\n\n" + `{"lldp":[{"interface":[` + strings.Join(ifcs, ",") + `]}]}`
	}
	many := make([]string, neighbor.MaxNeighbors+1)
	for i := range many {
		many[i] = one(fmt.Sprintf("eth%d", i), "c", "p", "leaf")
	}
	tests := []struct {
		name     string
		in       string
		kept     int
		warnings []string
		err      error
	}{
		{"one neighbor", doc(one("eth0", "aa:bb", "swp1", "leaf01")), 1, nil, nil},
		{"no neighbors", `{"lldp":[{}]}`, 0, nil, nil},
		{"no chassis ID", doc(one("eth0", "", "swp1", "leaf01")), 0, []string{`interface "eth0": no chassis ID`}, nil},
		{"no port ID", doc(one("eth0", "aa", "", "leaf01")), 0, []string{`interface "eth0": no port ID`}, nil},
		{"oversized system name", doc(one("eth0", "aa", "swp1", strings.Repeat("x", neighbor.MaxField+1))), 0, []string{fmt.Sprintf("a field of %d bytes", neighbor.MaxField+1)}, nil},
		{"not ASCII", doc(one("eth0", "aa", "swp1", "leaf-é")), 0, []string{"not printable ASCII"}, nil},
		{"control character", strings.Replace(doc(one("eth0", "aa", "swp1", "LEAF")), "LEAF", `leaf\u0007`, 1), 0, []string{"not printable ASCII"}, nil},
		{"learnt by CDP", strings.Replace(doc(one("eth0", "aa", "swp1", "l")), `"via":"LLDP"`, `"via":"CDPv2"`, 1), 0, []string{`learnt by "CDPv2"`}, nil},
		{"too many", doc(many...), neighbor.MaxNeighbors, []string{fmt.Sprintf("more than %d neighbors", neighbor.MaxNeighbors)}, nil},
		{"plain -f json, no chassis ID", `{"lldp":{"interface":{"eth0":{"chassis":{}}}}}`, 0, []string{`interface "eth0": no chassis ID`}, nil},
		{"plain -f json, no neighbors", `{"lldp":{}}`, 0, nil, nil},
		{"no lldp value", `{"neighbors":[]}`, 0, nil, neighbor.ErrFormat},
		{"lldp is a string", `{"lldp":"none"}`, 0, nil, neighbor.ErrFormat},
		{"not JSON", "Interface: eth0", 0, nil, neighbor.ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, warnings, err := neighbor.Parse([]byte(tt.in))
			if !errors.Is(err, tt.err) || len(got) != tt.kept || len(warnings) != len(tt.warnings) {
				t.Fatalf("Parse = %d kept, %q, %v; want %d, %q, %v", len(got), warnings, err, tt.kept, tt.warnings, tt.err)
			}
			for i, w := range tt.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %q lacks %q", warnings[i], w)
				}
			}
		})
	}
}

// TestParseSavedOutputs reads what the real lldpcli (lldpd 1.0.16)
// printed, in both its JSON formats, for a host with one neighbor and one
// with two (testdata/SOURCE.md), as saved and as someone might save it:
// with a byte-order mark, after a shell prompt and the command, with a
// prompt after it, with CRLF line ends. Both formats give the same
// neighbors.
func TestParseSavedOutputs(t *testing.T) {
	t.Parallel()
	variants := map[string]func([]byte) []byte{
		"as saved":     func(b []byte) []byte { return b },
		"BOM":          func(b []byte) []byte { return append([]byte("\xef\xbb\xbf"), b...) },
		"prompt first": func(b []byte) []byte { return append([]byte("root@gpu01:~# lldpcli -f json show neighbors\n"), b...) },
		"prompt after": func(b []byte) []byte { return append(append([]byte{}, b...), []byte("root@gpu01:~# \n")...) },
		"CRLF":         func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) },
	}
	for _, count := range []string{"one", "two"} {
		var want []neighbor.Neighbor
		for _, format := range []string{"json0", "json"} {
			data, err := os.ReadFile(filepath.Join("testdata", "lldpd-1.0.16-"+format+"-"+count+".json"))
			if err != nil {
				t.Fatal(err)
			}
			for name, v := range variants {
				got, warnings, err := neighbor.Parse(v(data))
				if err != nil || len(warnings) > 0 {
					t.Fatalf("%s %s (%s): %v %v", format, count, name, err, warnings)
				}
				if want == nil {
					want = got
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s %s (%s): %+v, want %+v", format, count, name, got, want)
				}
			}
		}
		if n := map[string]int{"one": 1, "two": 2}[count]; len(want) != n || want[0].SysName == "" || want[0].ChassisID == "" || want[0].PortDescr == "" || len(want[0].MgmtIPs) != 1 {
			t.Errorf("%s: %+v", count, want)
		}
	}
}

// FuzzParse: no output panics the parser, and what it keeps has
// IDs and bounded values.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"lldpd-1.0.16-json0-one", "lldpd-1.0.16-json0-two", "lldpd-1.0.16-json-one", "lldpd-1.0.16-json-two",
		"unifabric-h3c-and-hosts-json0", "unifabric-sonic-4rail-json0"} {
		data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, _, err := neighbor.Parse(data)
		if err != nil {
			return
		}
		if len(got) > neighbor.MaxNeighbors {
			t.Fatalf("kept %d neighbors", len(got))
		}
		for _, n := range got {
			if n.ChassisID == "" || n.PortID == "" || len(n.SysName) > neighbor.MaxField || len(n.MgmtIPs) > neighbor.MaxMgmtIPs {
				t.Fatalf("kept %+v", n)
			}
		}
	})
}

// TestParseOthersOutputs reads lldpcli outputs that another project saved
// from its own hosts (testdata/SOURCE.md, "Saved by others"): an H3C
// Comware switch and hosts running lldpd, and a GPU host on four SONiC
// leaves; as saved, and with a byte-order mark, a prompt and CRLFs.
func TestParseOthersOutputs(t *testing.T) {
	t.Parallel()
	type row struct{ iface, chassis, sysName, portID, caps string }
	tests := []struct {
		file string
		want []row
	}{
		{"unifabric-h3c-and-hosts-json0.json", []row{
			{"enp129s0f0", "58:c7:ac:5f:2d:2c", "DaoCloud_ShangPu_H3C_D01_AccessSwitch", "GigabitEthernet1/0/17", "bridge,router"},
			{"enp5s0f0np0", "ac:1f:6b:25:86:64", "10-20-1-50", "e8:eb:d3:93:ae:10", "bridge,router"},
			{"enp11s0f0np0", "ac:1f:6b:25:86:64", "10-20-1-50", "b8:3f:d2:9f:09:42", "bridge,router"},
		}},
		{"unifabric-sonic-4rail-json0.json", []row{
			{"ens1np0", "70:06:92:6e:32:64", "StorageSW", "Ethernet120", "bridge,router"},
			{"ens841np0", "70:06:92:6e:32:1c", "LEAF03", "Ethernet184", "bridge,router"},
			{"ens842np0", "70:06:92:6e:34:5c", "LEAF04", "Ethernet184", "bridge,router"},
			{"ens110np0", "70:06:92:6e:34:80", "LEAF02", "Ethernet184", "bridge,router"},
			{"ens108np0", "70:06:92:6e:33:18", "LEAF01", "Ethernet184", "bridge,router"},
		}},
	}
	variants := map[string]func([]byte) []byte{
		"as saved": func(b []byte) []byte { return b },
		"BOM":      func(b []byte) []byte { return append([]byte("\xef\xbb\xbf"), b...) },
		"prompt": func(b []byte) []byte {
			return append([]byte("admin@gpu-07:~$ sudo lldpcli -f json0 show neighbors\n"), b...)
		},
		"CRLF": func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) },
	}
	for _, tt := range tests {
		data, err := os.ReadFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		for name, v := range variants {
			got, warnings, err := neighbor.Parse(v(data))
			if err != nil || len(warnings) > 0 {
				t.Fatalf("%s (%s): %v %v", tt.file, name, err, warnings)
			}
			var rows []row
			for _, n := range got {
				rows = append(rows, row{n.Interface, n.ChassisID, n.SysName, n.PortID, strings.Join(n.Capabilities, ",")})
			}
			slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.iface, b.iface) })
			want := slices.Clone(tt.want)
			slices.SortFunc(want, func(a, b row) int { return strings.Compare(a.iface, b.iface) })
			if !slices.Equal(rows, want) {
				t.Errorf("%s (%s):\n got %+v\nwant %+v", tt.file, name, rows, want)
			}
		}
	}
	// The 4-rail host: its RDMA NICs' leaves form one group of four.
	data, err := os.ReadFile(filepath.Join("testdata", "unifabric-sonic-4rail-json0.json"))
	if err != nil {
		t.Fatal(err)
	}
	ns, _, err := neighbor.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	ns = slices.DeleteFunc(ns, func(n neighbor.Neighbor) bool { return n.SysName == "StorageSW" })
	g := neighbor.Leaves(map[string][]neighbor.Neighbor{"gpu-07": ns})["gpu-07"]
	if g == nil || g.Name != "LEAF01+LEAF02+LEAF03+LEAF04" {
		t.Errorf("leaf group %+v, want LEAF01+LEAF02+LEAF03+LEAF04", g)
	}
}
