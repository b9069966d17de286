package infiniband

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestParseExample(t *testing.T) {
	t.Parallel()
	topo, err := Parse(strings.NewReader(readTestdata(t, "example.out")), "example.out")
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Nodes) != 9 {
		t.Fatalf("%d nodes, want 9", len(topo.Nodes))
	}
	leaf, ok := topo.Node(0x2c5eab0300000200)
	if !ok || leaf.Type != Switch || leaf.Ports != 65 || leaf.Description != "MF0;LEAF-01:MQM9701/U1" ||
		leaf.VendorID != 0x2c9 || leaf.DeviceID != 0xd2f2 || leaf.SysImageGUID != 0x2c5eab0300000200 || len(leaf.Links) != 4 {
		t.Fatalf("leaf = %+v", leaf)
	}
	host := leaf.Links[0]
	want := Link{Port: 1, PeerType: CA, PeerGUID: 0xe09d730300000001, PeerPort: 1, PeerPortGUID: 0xe09d730300000001,
		PeerDescription: "node001 mlx5_0", Width: 4, Speed: "NDR", Line: host.Line}
	if host != want {
		t.Errorf("link = %+v\nwant %+v", host, want)
	}
	if host.Gbps() != 400 {
		t.Errorf("Gbps = %d", host.Gbps())
	}
	ca, _ := topo.Node(0xe09d730300000001)
	if ca.Type != CA || ca.Description != "node001 mlx5_0" || ca.Links[0].PortGUID != 0xe09d730300000001 ||
		ca.Links[0].PeerDescription != "MF0;LEAF-01:MQM9701/U1" {
		t.Errorf("ca = %+v", ca)
	}
}

func TestLinkGbps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		width int
		speed string
		want  uint32
	}{
		{4, "SDR", 10}, {4, "DDR", 20}, {4, "QDR", 40}, {4, "FDR10", 40}, {4, "FDR", 56}, {4, "EDR", 100},
		{4, "HDR", 200}, {2, "HDR", 100}, {4, "NDR", 400}, {2, "NDR", 200}, {4, "XDR", 800}, {12, "SDR", 30},
		{1, "SDR", 3}, {4, "", 0}, {0, "NDR", 0},
	}
	for _, tt := range tests {
		if got := (Link{Width: tt.width, Speed: tt.speed}).Gbps(); got != tt.want {
			t.Errorf("%dx%s = %d, want %d", tt.width, tt.speed, got, tt.want)
		}
	}
}

func TestParseVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		text  string
		check func(t *testing.T, topo *Topology)
	}{
		{"group mode decorations and ext ports", `
Chassis 1 (guid 0x8f10400410015)

# Spine Nodes
vendid=0x8f1
devid=0x5a31
sysimgguid=0x8f10400410015		# Chassis 1 (ISR9288)
switchguid=0x8f10400410016(8f10400410016)	# ISR9288 Spine 1 Chip 1
Switch	24 "S-0008f10400410016"		# "Spine 1" base port 0 lid 6 lmc 0
[1][ext 1]	"S-0008f10400410017"[2][ext 2]		# "Line 1" lid 7 4xDDR s=2 w=2 v=4

Non-Chassis Nodes
Hostname: ignored-by-toposcope

vendid=0x8f1
devid=0x5a31
switchguid=0x8f10400410017(8f10400410017)
Switch	24 "S-0008f10400410017"		# "Line 1" base port 0 lid 7 lmc 0
[2]	"S-0008f10400410016"[1]		# "Spine 1" lid 6 4xDDR
`, func(t *testing.T, topo *Topology) {
			n, _ := topo.Node(0x8f10400410016)
			if n.SysImageGUID != 0x8f10400410015 || n.Links[0].Width != 4 || n.Links[0].Speed != "DDR" {
				t.Errorf("node = %+v", n)
			}
		}},
		{"CRLF, quotes and # inside descriptions, scp", "switchguid=0x1(1)\r\nSwitch\t8 \"S-0000000000000001\"\t\t# \"a \"quoted\" #1\" enhanced port 0 lid 1 lmc 0\r\n" +
			"[1]\t\"H-0000000000000002\"[1](3) \t\t# \"h1 mlx5_0\" lid 2 4xEDR (scp)\r\n\r\n" +
			"caguid=0x2\r\nCa\t2 \"H-0000000000000002\"\t\t# \"h1 mlx5_0\" (scp)\r\n[1](3) \t\"S-0000000000000001\"[1]\t\t# lid 2 lmc 0 \"a \"quoted\" #1\" lid 1 4xEDR\r\n",
			func(t *testing.T, topo *Topology) {
				sw, _ := topo.Node(1)
				ca, _ := topo.Node(2)
				if sw.Description != `a "quoted" #1` || ca.Description != "h1 mlx5_0" || ca.Links[0].PortGUID != 3 || sw.Links[0].Gbps() != 100 {
					t.Errorf("switch %+v ca %+v", sw, ca)
				}
			}},
		{"concatenated outputs merge by GUID", strings.Repeat(`switchguid=0x1(1)
Switch	8 "S-0000000000000001"		# "sw" enhanced port 0 lid 1 lmc 0
[1]	"S-0000000000000002"[1]		# "sw2" lid 2 4xHDR

Switch	8 "S-0000000000000002"		# "sw2" enhanced port 0 lid 2 lmc 0
[1]	"S-0000000000000001"[1]		# "sw" lid 1 4xHDR
`, 2), func(t *testing.T, topo *Topology) {
			if len(topo.Nodes) != 2 || len(topo.Nodes[0].Links) != 1 {
				t.Errorf("nodes = %+v", topo.Nodes)
			}
		}},
		{"unknown width or speed is kept as unknown", `Switch	8 "S-0000000000000001"		# "sw" base port 0 lid 1 lmc 0
[1]	"S-0000000000000002"[1]		# "sw2" lid 2 undefined (0)
[2]	"S-0000000000000002"[2]		# "sw2" lid 2 4xZDR

Switch	8 "S-0000000000000002"		# "sw2" base port 0 lid 2 lmc 0
[1]	"S-0000000000000001"[1]		# "sw" lid 1 undefined (0)
[2]	"S-0000000000000001"[2]		# "sw" lid 1 4xZDR
`, func(t *testing.T, topo *Topology) {
			l := topo.Nodes[0].Links
			if l[0].Width != 0 || l[0].Gbps() != 0 || l[1].Width != 4 || l[1].Speed != "" {
				t.Errorf("links = %+v", l)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			topo, err := Parse(strings.NewReader(tt.text), "test")
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, topo)
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	example := readTestdata(t, "example.out")
	lines := strings.Split(example, "\n")
	cut := func(n int) string { return strings.Join(lines[:n], "\n") }
	tests := []struct {
		name string
		text string
		want error
		msg  string
	}{
		{"empty", "", ErrNoSwitches, "holds no switch"},
		{"only comments", "#\n# nothing\n", ErrNoSwitches, ""},
		{"garbled line", strings.Replace(example, "vendid=0x2c9\ndevid=0xcf09", "vendid=0x2c9\n%%%garbage", 1), ErrSyntax, `example:35: malformed ibnetdiscover output: not an ibnetdiscover line`},
		{"line cut in the middle", cut(21) + "\n[33]\t\"S-2c5eab03000", ErrSyntax, "example:22: malformed ibnetdiscover output: peer node ID"},
		{"description cut", cut(21) + "\n[33]\t\"S-2c5eab0300000100\"[1]\t\t# \"MF0;SPI", ErrSyntax, "unterminated quoted description"},
		{"speed cut", cut(21) + "\n[33]\t\"S-2c5eab0300000100\"[1]\t\t# \"MF0;SPINE-01:MQM9701/U1\" lid", ErrSyntax, "line cut short"},
		{"output cut after the switches", cut(33), ErrTruncated, "example:19: incomplete ibnetdiscover output: port 1 of S-2c5eab0300000200 (\"MF0;LEAF-01:MQM9701/U1\") is cabled to H-e09d730300000001, which has no record"},
		{"output cut inside a header", cut(43), ErrTruncated, "record header without a node line"},
		{"output cut after a node line", cut(52), ErrTruncated, "whose record (line 52) lacks that port"},
		{"port beyond the port count", strings.Replace(example, "[65]\t\"H-2c5eab0300000210\"", "[66]\t\"H-2c5eab0300000210\"", 1), ErrSyntax, "bad local port (the node has 65 ports)"},
		{"port line outside a record", "[1]\t\"S-0000000000000001\"[1]\t\t# \"x\" lid 1 4xSDR\n", ErrSyntax, "port line outside a node record"},
		{"cable seen differently from both ends", strings.Replace(example, "\"S-2c5eab0300000200\"[1]\t\t# lid 101", "\"S-2c5eab0300000200\"[2]\t\t# lid 101", 1), ErrInconsistent, "which reports H-e09d730300000002[1]"},
		{"header of another node", strings.Replace(example, "switchguid=0x2c5eab0300000300(", "switchguid=0x2c5eab0300000999(", 1), ErrInconsistent, "follows the header of Switch 2c5eab0300000999"},
		{"peer of the wrong type", strings.Replace(example, "[1]\t\"S-2c5eab0300000200\"[33]", "[1]\t\"H-2c5eab0300000200\"[33]", 1), ErrInconsistent, "which is a Switch"},
		{"node described twice differently", example + "\nSwitch\t65 \"S-2c5eab0300000100\"\t\t# \"other\" enhanced port 0 lid 10 lmc 0\n", ErrInconsistent, "described differently at line 10"},
		{"port cabled twice", strings.Replace(example, "[2]\t\"S-2c5eab0300000300\"[33]", "[1]\t\"S-2c5eab0300000300\"[33]", 1), ErrInconsistent, "is also cabled to"},
		{"unknown header", "foo=1\n", ErrSyntax, `unknown header "foo"`},
		{"bad GUID", "switchguid=0xZZ\n", ErrSyntax, "switchguid"},
		{"ID of the wrong type", "Switch\t8 \"H-0000000000000001\"\t\t# \"x\" base port 0 lid 1 lmc 0\n", ErrSyntax, "Switch record with a Ca ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(strings.NewReader(tt.text), "example")
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse() = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q lacks %q", err, tt.msg)
			}
		})
	}
}

func TestParseReportsManyProblemsCapped(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("Switch\t64 \"S-0000000000000001\"\t\t# \"sw\" base port 0 lid 1 lmc 0\n")
	for p := 1; p <= 30; p++ {
		fmt.Fprintf(&b, "[%d]\t\"H-00000000000001%02x\"[1](1) \t\t# \"h mlx5_0\" lid 1 4xNDR\n", p, p)
	}
	_, err := Parse(strings.NewReader(b.String()), "x")
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "and 20 more problems") {
		t.Fatalf("error = %v", err)
	}
}

// TestParseErrorQuotesNothing: a file that is not ibnetdiscover output
// (a mistyped path) is refused naming the line, never quoting it.
func TestParseErrorQuotesNothing(t *testing.T) {
	t.Parallel()
	_, err := Parse(strings.NewReader("root:$6$s3cr3t:19000:0:99999:7:::\n"), "/etc/shadow")
	if !errors.Is(err, ErrSyntax) || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "/etc/shadow:1") {
		t.Fatalf("Parse = %v", err)
	}
}
