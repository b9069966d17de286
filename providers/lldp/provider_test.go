package lldp_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/lldp"
	"github.com/toposcope/toposcope/testenv/consumertest"
	"github.com/toposcope/toposcope/topology"
)

// savedReports are the fat tree's hosts' lldpcli outputs as saved from
// the lab (testdata/fattree).
func savedReports(t *testing.T) []providers.NodeFacts {
	t.Helper()
	r, err := consumertest.SavedReports(fatTreeFixtures, clusterHosts, func(h string) string { return h })
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// recordingWalker serves the saved walks, by switch name as the address,
// and records which addresses were asked.
type recordingWalker struct {
	consumertest.SavedSwitches
	mu    sync.Mutex
	asked []string
}

func (w *recordingWalker) Walk(ctx context.Context, host string, port int, root string, fn func(lldp.Var) error) error {
	w.mu.Lock()
	w.asked = append(w.asked, host)
	w.mu.Unlock()
	return w.SavedSwitches.Walk(ctx, host, port, root, fn)
}

func savedWalker(t *testing.T) (*recordingWalker, map[string]string) {
	t.Helper()
	w := &recordingWalker{SavedSwitches: consumertest.SavedSwitches{}}
	addrs := map[string]string{}
	for _, sw := range fatTree.switches {
		w.SavedSwitches[sw] = filepath.Join(fatTreeFixtures, sw+".snmprec")
		addrs[sw] = sw
	}
	return w, addrs
}

func discoverSaved(t *testing.T, s *lldp.SNMP, w lldp.Walker, reports []providers.NodeFacts) (*topology.Graph, string, error) {
	t.Helper()
	cfg := lldp.DefaultConfig()
	cfg.Reports, cfg.SNMP = reports, s
	var logs bytes.Buffer
	p, err := lldp.NewWithWalker(cfg, providers.Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, w)
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(t.Context(), providers.Request{})
	return g, logs.String(), err
}

// TestSavedFatTree runs the provider on what the lab's real lldpd and
// snmpd said, without them: the same tree as TestEthernetFatTree; an
// excluded spine pod leaves its leaves as roots; maxSwitches and
// networks bound what is walked, each with a warning.
func TestSavedFatTree(t *testing.T) {
	t.Parallel()
	leavesOnly := map[string]string{"h1": "la0+la1", "h2": "la0+la1", "h3": "lb0+lb1", "h4": "lc0+lc1"}
	// Walking only the leaves shows their uplinks: the spines, not the
	// cores.
	twoTiers := map[string]string{"h1": "la0+la1 sa0", "h2": "la0+la1 sa0", "h3": "lb0+lb1 sa0", "h4": "lc0+lc1 sb0"}
	tests := []struct {
		name  string
		snmp  func(addrs map[string]string) *lldp.SNMP
		want  map[string]string
		warn  string
		asked []string // addresses walked, sorted; nil: not checked
	}{
		{name: "whole tree", want: wantFatTree,
			snmp: func(a map[string]string) *lldp.SNMP { return &lldp.SNMP{Addresses: a, MaxHops: 3} }},
		{name: "exclude pod b's spines", want: map[string]string{"h1": "la0+la1 sa0 c0", "h2": "la0+la1 sa0 c0", "h3": "lb0+lb1 sa0 c0", "h4": "lc0+lc1"},
			snmp: func(a map[string]string) *lldp.SNMP {
				return &lldp.SNMP{Addresses: a, MaxHops: 3, Exclude: []string{"sb*"}}
			}},
		{name: "maxSwitches stops at the leaves", want: twoTiers, warn: "4 switches of tier 2 not walked: maxSwitches is 6",
			snmp:  func(a map[string]string) *lldp.SNMP { return &lldp.SNMP{Addresses: a, MaxHops: 3, MaxSwitches: 6} },
			asked: []string{"la0", "la0", "la1", "la1", "lb0", "lb0", "lb1", "lb1", "lc0", "lc0", "lc1", "lc1"}},
		{name: "maxHops 1 walks the leaves", want: twoTiers,
			snmp: func(a map[string]string) *lldp.SNMP { return &lldp.SNMP{Addresses: a, MaxHops: 1} }},
		{name: "addresses outside networks are never asked", want: leavesOnly, warn: "are outside snmp.networks", asked: []string{},
			snmp: func(map[string]string) *lldp.SNMP { return &lldp.SNMP{Networks: []string{"10.99.0.0/16"}} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, addrs := savedWalker(t)
			s := tt.snmp(addrs)
			s.CommunityFile = secretFile(t, "community", community)
			g, logs, err := discoverSaved(t, s, w, savedReports(t))
			if err != nil {
				t.Fatal(err)
			}
			checkPaths(t, g, tt.want)
			if tt.warn != "" && !strings.Contains(logs, tt.warn) {
				t.Errorf("no warning %q:\n%s", tt.warn, logs)
			}
			if tt.warn == "" && strings.Contains(logs, "level=WARN") {
				t.Errorf("warnings:\n%s", logs)
			}
			if tt.asked != nil {
				slices.Sort(w.asked)
				if !slices.Equal(w.asked, tt.asked) {
					t.Errorf("walked %v, want %v", w.asked, tt.asked)
				}
			}
		})
	}
}

// TestSavedFatTreeAsConsumersSee is consumertest.FatTreeGraph, the graph
// the engines' tests publish: the same tree, under other node names.
func TestSavedFatTreeAsConsumersSee(t *testing.T) {
	t.Parallel()
	g, err := consumertest.FatTreeGraph(func(h string) string { return "gpu-" + h })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for h, p := range wantFatTree {
		want["gpu-"+h] = p
	}
	checkPaths(t, g, want)
}

func TestMissingNodes(t *testing.T) {
	t.Parallel()
	reports := append(savedReports(t), providers.NodeFacts{Node: "h9", GPUs: 8})
	cfg := lldp.DefaultConfig()
	cfg.Reports, cfg.Missing = reports, agents.MissingError
	p, err := lldp.New(cfg, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Discover(t.Context(), providers.Request{}); !errors.Is(err, lldp.ErrMissing) || !strings.Contains(err.Error(), "h9") {
		t.Errorf("Discover = %v, want ErrMissing naming h9", err)
	}
	cfg.Missing = agents.MissingUnplaced
	if p, err = lldp.New(cfg, providers.Deps{}); err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(t.Context(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(g.Unplaced(), "h9") {
		t.Errorf("h9 not listed unplaced: %v", g.Unplaced())
	}
}

func TestConfigNamesTheField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		snmp  lldp.SNMP
		field string
	}{
		{"no community", lldp.SNMP{Networks: []string{"10.0.0.0/8"}}, "snmp.communityFile"},
		{"no networks", lldp.SNMP{CommunityFile: "/c"}, "snmp.networks"},
		{"bad network", lldp.SNMP{CommunityFile: "/c", Networks: []string{"10.0.0.0/33"}}, "snmp.networks[0]"},
		{"bad version", lldp.SNMP{Version: "1", Networks: []string{"10.0.0.0/8"}}, "snmp.version"},
		{"v3 without user", lldp.SNMP{Version: lldp.Version3, Networks: []string{"10.0.0.0/8"}}, "snmp.user"},
		{"v3 privacy without auth", lldp.SNMP{Version: lldp.Version3, User: "u", PrivPassphraseFile: "/p", Networks: []string{"10.0.0.0/8"}}, "snmp.privPassphraseFile"},
		{"v3 unknown auth", lldp.SNMP{Version: lldp.Version3, User: "u", AuthProtocol: "SHA1024", Networks: []string{"10.0.0.0/8"}}, "snmp.authProtocol"},
		{"v2c with a user", lldp.SNMP{CommunityFile: "/c", User: "u", Networks: []string{"10.0.0.0/8"}}, "snmp.user"},
		{"bad address", lldp.SNMP{CommunityFile: "/c", Addresses: map[string]string{"sw1": "sw1:notaport"}}, "snmp.addresses.sw1"},
		{"bad glob", lldp.SNMP{CommunityFile: "/c", Networks: []string{"10.0.0.0/8"}, Exclude: []string{"["}}, "snmp.exclude[0]"},
		{"hops", lldp.SNMP{CommunityFile: "/c", Networks: []string{"10.0.0.0/8"}, MaxHops: 9}, "snmp.maxHops"},
		{"parallel", lldp.SNMP{CommunityFile: "/c", Networks: []string{"10.0.0.0/8"}, Parallel: -1}, "snmp.parallel"},
		{"timeout", lldp.SNMP{CommunityFile: "/c", Networks: []string{"10.0.0.0/8"}, Timeout: -1}, "snmp.timeout"},
	}
	for _, tt := range tests {
		cfg := lldp.DefaultConfig()
		cfg.SNMP = &tt.snmp
		err := cfg.Validate()
		if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: Validate = %v, want an error naming %s", tt.name, err, tt.field)
		}
	}
	cfg := lldp.DefaultConfig()
	cfg.SNMP = &lldp.SNMP{CommunityFile: filepath.Join(t.TempDir(), "absent"), Networks: []string{"10.0.0.0/8"}}
	if _, err := lldp.New(cfg, providers.Deps{}); err == nil {
		t.Error("New with an absent community file: no error")
	}
}

// TestOthersHostReport: a GPU host's lldpcli output that another project
// saved (neighbor/testdata, "Saved by others": four SONiC leaves and a
// storage switch) passes the agents' checks as a report and places the
// host under one leaf group of its switches.
func TestOthersHostReport(t *testing.T) {
	t.Parallel()
	reports, err := consumertest.SavedReports(filepath.Join("neighbor", "testdata"), []string{"unifabric-sonic-4rail-json0"}, func(string) string { return "gpu-07" })
	if err != nil {
		t.Fatal(err)
	}
	g, logs, err := discoverSaved(t, nil, nil, reports)
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	if got := paths(g)["gpu-07"]; got != "LEAF01+LEAF02+LEAF03+LEAF04+StorageSW" {
		t.Errorf("gpu-07 under %q", got)
	}
}
