package agents_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/lldp/neighbor"
	"github.com/toposcope/toposcope/testenv/netlab"
	"github.com/toposcope/toposcope/topology"
)

// TestLeavesFromLLDP: four hosts on two rails, in network namespaces
// with the real lldpd (h1, h2 cabled to leaf-a0 and leaf-a1; h3, h4 to
// leaf-b0 and leaf-b1), report what their lldpcli shows. The provider
// places each pair under its leaf group; h5, whose second link is down,
// joins its group; a liar that claims leaf-a0's chassis under another
// name and a leaf of the other group moves no one and renames nothing.
func TestLeavesFromLLDP(t *testing.T) {
	t.Parallel()
	lab := netlab.New(t)
	cabling := map[string][2]string{"h1": {"leaf-a0", "leaf-a1"}, "h2": {"leaf-a0", "leaf-a1"}, "h3": {"leaf-b0", "leaf-b1"}, "h4": {"leaf-b0", "leaf-b1"}, "h5": {"leaf-a0", ""}}
	port := map[string]int{}
	for _, h := range []string{"h1", "h2", "h3", "h4", "h5"} {
		for rail, leaf := range cabling[h] {
			if leaf != "" {
				port[leaf]++
				lab.Link(h, fmt.Sprintf("eth%d", rail), leaf, fmt.Sprintf("swp%d", port[leaf]))
			}
		}
	}
	for _, n := range []string{"leaf-a0", "leaf-a1", "leaf-b0", "leaf-b1", "h1", "h2", "h3", "h4", "h5"} {
		lab.LLDPD(t.Context(), n, n)
	}
	var reports []providers.NodeFacts
	for _, h := range []string{"h1", "h2", "h3", "h4", "h5"} {
		want := 2
		if h == "h5" {
			want = 1
		}
		var got []providers.LLDPNeighbor
		deadline := time.Now().Add(30 * time.Second)
		for len(got) < want {
			if time.Now().After(deadline) {
				t.Fatalf("%s sees %d neighbors, want %d", h, len(got), want)
			}
			time.Sleep(100 * time.Millisecond)
			out, err := lab.LLDPCLI(t.Context(), h, "-f", "json0", "show", "neighbors")
			if err != nil {
				t.Fatal(err)
			}
			if got, _, err = neighbor.Parse(out); err != nil {
				t.Fatal(err)
			}
			if *update && len(got) == want { // the real tool's output, for the tests that cannot run lldpd
				if err := os.MkdirAll(lldpFixtures, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(lldpFixtures, h+".json"), out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		f := providers.NodeFacts{Node: h, GPUs: 8, LLDP: got}
		if err := agents.CheckFacts(f); err != nil {
			t.Fatal(err)
		}
		reports = append(reports, f)
	}
	a0, b1 := chassisOf(t, reports, "leaf-a0"), chassisOf(t, reports, "leaf-b1")
	reports = append(reports, providers.NodeFacts{Node: "liar", GPUs: 8, LLDP: []providers.LLDPNeighbor{
		{Interface: "eth0", ChassisID: a0, SysName: "evil", PortID: "p1"},
		{Interface: "eth1", ChassisID: b1, SysName: "leaf-b1", PortID: "p1"},
	}})
	cfg := agents.DefaultConfig()
	cfg.Reports = reports
	p, err := agents.New(cfg, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, n := range g.Nodes() {
		if path := g.Path(n.Name); len(path) > 0 {
			got[n.Name] = path[0].ID
		}
	}
	want := map[string]string{"h1": "leaf-a0+leaf-a1", "h2": "leaf-a0+leaf-a1", "h5": "leaf-a0+leaf-a1",
		"h3": "leaf-b0+leaf-b1", "h4": "leaf-b0+leaf-b1", "liar": "leaf-a0+leaf-b1"}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s is under %q, want %q (all: %v)", n, got[n], w, got)
		}
	}
	for _, s := range g.Switches() {
		if strings.Contains(s.ID, "evil") {
			t.Errorf("the liar renamed a leaf: %s", s.ID)
		}
	}
	if ids := switchIDs(g.Switches()); !slices.Equal(ids, []string{"leaf-a0+leaf-a1", "leaf-a0+leaf-b1", "leaf-b0+leaf-b1"}) {
		t.Errorf("switches %v", ids)
	}
}

// lldpFixtures holds what the real lldpcli printed on each host of
// TestLeavesFromLLDP (lldpd 1.0.16 in network namespaces; written with
// -update): h1-h4 on two rails, h5 with its second link down.
var lldpFixtures = filepath.Join("testdata", "lldp-2rail")

var update = flag.Bool("update", false, "rewrite the real-tool fixtures under testdata/")

// TestLeavesFromSavedLLDP: the saved outputs of the real lldpcli give the
// same leaf groups without lldpd.
func TestLeavesFromSavedLLDP(t *testing.T) {
	t.Parallel()
	g := graphFromLLDPFixtures(t, lldpFixtures)
	want := map[string]string{"h1": "leaf-a0+leaf-a1", "h2": "leaf-a0+leaf-a1", "h5": "leaf-a0+leaf-a1", "h3": "leaf-b0+leaf-b1", "h4": "leaf-b0+leaf-b1"}
	for n, w := range want {
		if path := g.Path(n); len(path) != 1 || path[0].ID != w {
			t.Errorf("%s is under %v, want %s", n, path, w)
		}
	}
}

// graphFromLLDPFixtures discovers with the agents provider on reports
// made of the saved lldpcli outputs in dir (one file per host).
func graphFromLLDPFixtures(t *testing.T, dir string) *topology.Graph {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s (%v): run the test with -update where lldpd runs", dir, err)
	}
	cfg := agents.DefaultConfig()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ns, warnings, err := neighbor.Parse(data)
		if err != nil || len(warnings) > 0 {
			t.Fatalf("%s: %v %v", f, err, warnings)
		}
		cfg.Reports = append(cfg.Reports, providers.NodeFacts{Node: strings.TrimSuffix(filepath.Base(f), ".json"), GPUs: 8, LLDP: ns})
	}
	p, err := agents.New(cfg, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func chassisOf(t *testing.T, reports []providers.NodeFacts, name string) string {
	t.Helper()
	for _, r := range reports {
		for _, n := range r.LLDP {
			if n.SysName == name {
				return n.ChassisID
			}
		}
	}
	t.Fatalf("no report sees %s", name)
	return ""
}

func switchIDs(ss []topology.Switch) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.ID)
	}
	slices.Sort(out)
	return out
}
