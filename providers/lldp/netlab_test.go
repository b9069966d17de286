package lldp_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/lldp"
	"github.com/toposcope/toposcope/providers/lldp/neighbor"
	"github.com/toposcope/toposcope/testenv/netlab"
	"github.com/toposcope/toposcope/topology"
)

var update = flag.Bool("update", false, "rewrite the fixtures under testdata/ from the real lldpd and snmpd")

// fatTree is the lab's fabric: a 3-tier Ethernet fat tree with two
// rails. Pod a: leaves la0/la1 (rail 0/1) hold h1 and h2, lb0/lb1 hold h3,
// under spines sa0 (rail 0) and sa1 (rail 1); pod b: lc0/lc1 hold h4,
// under sb0 and sb1; cores c0 and c1 reach every spine. stor1, a storage
// leaf under sa0, holds nas1, which is no cluster host.
var fatTree = struct {
	hosts    map[string][2]string // host → its leaves, rail 0 and 1
	uplinks  map[string][]string  // switch → the switches above it
	switches []string
}{
	hosts: map[string][2]string{"h1": {"la0", "la1"}, "h2": {"la0", "la1"}, "h3": {"lb0", "lb1"}, "h4": {"lc0", "lc1"}, "nas1": {"stor1", ""}},
	uplinks: map[string][]string{
		"la0": {"sa0"}, "lb0": {"sa0"}, "la1": {"sa1"}, "lb1": {"sa1"}, "lc0": {"sb0"}, "lc1": {"sb1"}, "stor1": {"sa0"},
		"sa0": {"c0", "c1"}, "sa1": {"c0", "c1"}, "sb0": {"c0", "c1"}, "sb1": {"c0", "c1"},
	},
	switches: []string{"la0", "la1", "lb0", "lb1", "lc0", "lc1", "sa0", "sa1", "sb0", "sb1", "c0", "c1", "stor1"},
}

// clusterHosts are the fat tree's cluster nodes (nas1 is not one).
var clusterHosts = []string{"h1", "h2", "h3", "h4"}

const community = "lab-read-only"

// lab is the fat tree built in network namespaces, with the real lldpd in
// every host and switch and the real snmpd serving each switch's
// LLDP-MIB on its management address.
type lab struct {
	*netlab.Lab
	mgmt    map[string]netip.Addr
	reports []providers.NodeFacts
}

func buildFatTree(t *testing.T) *lab {
	t.Helper()
	l := &lab{Lab: netlab.New(t), mgmt: map[string]netip.Addr{}}
	ports := map[string]int{}
	port := func(sw string) string { ports[sw]++; return fmt.Sprintf("swp%d", ports[sw]) }
	for _, h := range append(slices.Clone(clusterHosts), "nas1") {
		for rail, leaf := range fatTree.hosts[h] {
			if leaf != "" {
				l.Link(h, fmt.Sprintf("eth%d", rail), leaf, port(leaf))
			}
		}
	}
	for _, sw := range fatTree.switches {
		for _, up := range fatTree.uplinks[sw] {
			l.Link(sw, port(sw), up, port(up))
		}
	}
	for _, sw := range fatTree.switches {
		l.mgmt[sw] = l.Mgmt(sw)
		l.SwitchLLDPD(t.Context(), sw, sw)
	}
	for _, h := range append(slices.Clone(clusterHosts), "nas1") {
		l.LLDPD(t.Context(), h, h)
	}
	// Everyone listens now: send again, so that each sees the neighbors
	// started after it without waiting for lldpd's 30 s interval.
	for _, n := range append(slices.Clone(fatTree.switches), append(slices.Clone(clusterHosts), "nas1")...) {
		if out, err := l.LLDPCLI(t.Context(), n, "update"); err != nil {
			t.Fatalf("%s: %v\n%s", n, err, out)
		}
	}
	for _, sw := range fatTree.switches {
		l.SNMPD(t.Context(), sw, l.mgmt[sw], netlab.SNMP{Community: community, User: "toposcope", AuthPass: "lab-auth-pass", PrivPass: "lab-priv-pass"})
	}
	for _, h := range clusterHosts {
		l.reports = append(l.reports, providers.NodeFacts{Node: h, GPUs: 8, LLDP: l.neighbors(t, h, 2)})
	}
	for _, sw := range fatTree.switches { // every switch sees all of its cables
		want := len(fatTree.uplinks[sw])
		for _, other := range fatTree.switches {
			want += strings.Count(" "+strings.Join(fatTree.uplinks[other], " ")+" ", " "+sw+" ")
		}
		for _, leaves := range fatTree.hosts {
			if leaves[0] == sw || leaves[1] == sw {
				want++
			}
		}
		l.neighbors(t, sw, want)
	}
	if *update {
		l.save(t)
	}
	return l
}

// neighbors waits until node's lldpcli shows want neighbors and returns
// them.
func (l *lab) neighbors(t *testing.T, node string, want int) []providers.LLDPNeighbor {
	t.Helper()
	deadline := time.Now().Add(40 * time.Second)
	for {
		out, err := l.LLDPCLI(t.Context(), node, "-f", "json0", "show", "neighbors")
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := neighbor.Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s sees %d neighbors, want %d", node, len(got), want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// secretFile writes a credential file for the test.
func secretFile(t testing.TB, name, value string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// discover runs the lldp provider on reports with s, logging into logs.
func discover(t *testing.T, reports []providers.NodeFacts, s *lldp.SNMP, logs *bytes.Buffer) *topology.Graph {
	t.Helper()
	cfg := lldp.DefaultConfig()
	cfg.Reports = reports
	cfg.Missing = agents.MissingUnplaced
	cfg.SNMP = s
	log := slog.New(slog.DiscardHandler)
	if logs != nil {
		log = slog.New(slog.NewTextHandler(logs, nil))
	}
	p, err := lldp.New(cfg, providers.Deps{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// wantFatTree are the fat tree's paths: leaf group, spine group, cores.
var wantFatTree = map[string]string{
	"h1": "la0+la1 sa0 c0", "h2": "la0+la1 sa0 c0", "h3": "lb0+lb1 sa0 c0", "h4": "lc0+lc1 sb0 c0",
}

func paths(g *topology.Graph) map[string]string {
	out := map[string]string{}
	for _, n := range g.Nodes() {
		var ids []string
		for _, s := range g.Path(n.Name) {
			ids = append(ids, s.ID)
		}
		out[n.Name] = strings.Join(ids, " ")
	}
	return out
}

func checkPaths(t *testing.T, g *topology.Graph, want map[string]string) {
	t.Helper()
	got := paths(g)
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s is under %q, want %q", n, got[n], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("nodes %v, want %v", got, want)
	}
}

// TestEthernetFatTree: the provider discovers the 3-tier fat tree from
// the hosts' lldpd reports and the switches' LLDP-MIB, served by the
// real snmpd, over SNMPv2c and SNMPv3 alike; without SNMP it gives the
// leaves alone; a host's false claims are dropped by what the switches
// say; switches that answer slowly, wrongly or not at all are warnings,
// and discovery goes on.
func TestEthernetFatTree(t *testing.T) {
	t.Parallel()
	l := buildFatTree(t)
	prefix := netip.PrefixFrom(l.mgmt["la0"], 24).Masked().String()
	v2c := func() *lldp.SNMP {
		return &lldp.SNMP{CommunityFile: secretFile(t, "community", community), Networks: []string{prefix}, MaxHops: 3}
	}
	t.Run("v2c", func(t *testing.T) {
		var logs bytes.Buffer
		g := discover(t, l.reports, v2c(), &logs)
		checkPaths(t, g, wantFatTree)
		if ids := switchIDs(g); !slices.Equal(ids, []string{"c0", "la0+la1", "lb0+lb1", "lc0+lc1", "sa0", "sb0"}) {
			t.Errorf("switches %v", ids)
		}
		if s, _ := g.Switch("c0"); s == nil || s.DisplayName != "c0 (+1)" {
			t.Errorf("core group %+v, want c0 and c1 as one", s)
		}
		if strings.Contains(logs.String(), "level=WARN") {
			t.Errorf("warnings on a healthy fabric:\n%s", logs.String())
		}
		if strings.Contains(logs.String(), community) {
			t.Error("the community is in the logs")
		}
	})
	t.Run("v3", func(t *testing.T) {
		s := &lldp.SNMP{Version: lldp.Version3, User: "toposcope", AuthPassphraseFile: secretFile(t, "auth", "lab-auth-pass"),
			PrivPassphraseFile: secretFile(t, "priv", "lab-priv-pass"), Networks: []string{prefix}, MaxHops: 3}
		checkPaths(t, discover(t, l.reports, s, nil), wantFatTree)
	})
	t.Run("wrong v3 passphrase", func(t *testing.T) {
		var logs bytes.Buffer
		s := &lldp.SNMP{Version: lldp.Version3, User: "toposcope", AuthPassphraseFile: secretFile(t, "auth", "not-the-pass"),
			Networks: []string{prefix}, MaxHops: 3, Timeout: 300 * time.Millisecond}
		g := discover(t, l.reports, s, &logs)
		checkPaths(t, g, map[string]string{"h1": "la0+la1", "h2": "la0+la1", "h3": "lb0+lb1", "h4": "lc0+lc1"})
		if !strings.Contains(logs.String(), "snmp: switch la0") || strings.Contains(logs.String(), "not-the-pass") {
			t.Errorf("want a warning per switch, without the passphrase:\n%s", logs.String())
		}
	})
	t.Run("leaves alone", func(t *testing.T) {
		g := discover(t, l.reports, nil, nil)
		checkPaths(t, g, map[string]string{"h1": "la0+la1", "h2": "la0+la1", "h3": "lb0+lb1", "h4": "lc0+lc1"})
		if n, _ := g.Node("h1"); n.Attributes[lldp.AttrTiers] != "leaves" {
			t.Errorf("h1 attributes %v, want %s=leaves", n.Attributes, lldp.AttrTiers)
		}
	})
	t.Run("liar", func(t *testing.T) {
		h1, h4 := l.reports[0].LLDP, l.reports[3].LLDP
		liar := providers.NodeFacts{Node: "liar", GPUs: 8, LLDP: []providers.LLDPNeighbor{h1[0], h4[1]}}
		liar.LLDP[0].Interface, liar.LLDP[1].Interface = "eth0", "eth1"
		var logs bytes.Buffer
		g := discover(t, append(slices.Clone(l.reports), liar), v2c(), &logs)
		want := maps.Clone(wantFatTree)
		want["liar"] = ""
		checkPaths(t, g, want)
		if !strings.Contains(logs.String(), "host liar claims switch la0 port") {
			t.Errorf("no warning names the liar's claim:\n%s", logs.String())
		}
	})
	t.Run("switches answer badly", func(t *testing.T) {
		// sb1 is looked for where nothing answers, sa1 where la0 answers,
		// and stor1 is excluded by name: the tree is the same, each
		// problem a warning.
		s := v2c()
		s.Timeout = 300 * time.Millisecond
		s.Addresses = map[string]string{"sb1": netip.AddrFrom4([4]byte{127, 0, 0, 1}).String() + ":1", "sa1": l.mgmt["la0"].String()}
		var logs bytes.Buffer
		g := discover(t, l.reports, s, &logs)
		checkPaths(t, g, wantFatTree)
		for _, w := range []string{"snmp: switch sb1", "snmp: switch sa1: " + l.mgmt["la0"].String() + " answers as chassis"} {
			if !strings.Contains(logs.String(), w) {
				t.Errorf("no warning %q:\n%s", w, logs.String())
			}
		}
	})
}

func switchIDs(g *topology.Graph) []string {
	var out []string
	for _, s := range g.Switches() {
		out = append(out, s.ID)
	}
	slices.Sort(out)
	return out
}
