package ufm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers"
)

// realStyle is a UFM snapshot named as UFM names systems: a host system
// per HCA, called by the HCA's node description "<host> <HCA>"; hosts
// with two HCAs on two leaves (HCA-1/HCA-2 on some hosts, HCA-3/HCA-4 on
// others); three leaves that share one system_name; a SHARP aggregation
// node; an HCA without rdma-ndd; GUIDs with and without 0x.
func realStyle() *Snapshot {
	s := &Snapshot{Systems: []System{
		{Name: "spine", GUID: "0x00000000000000f1", Type: "switch"},
		{Name: "leaf", GUID: "00000000000000a1", Type: "switch"},
		{Name: "leaf", GUID: "0x00000000000000a2", Type: "switch"},
		{Name: "leaf", GUID: "00000000000000a3", Type: "switch"},
		{Name: "Mellanox Technologies Aggregation Node", GUID: "00000000000000e1", Type: "host"},
		{Name: "MT4129 ConnectX7   Mellanox Technologies", GUID: "00000000000000e2", Type: "host"},
	}}
	link := func(a, b string) {
		s.Links = append(s.Links, Link{SourceGUID: a, DestinationGUID: b, Width: "4x", Speed: "NDR"})
	}
	for _, leaf := range []string{"0x00000000000000a1", "00000000000000a2", "00000000000000a3"} {
		link(leaf, "00000000000000f1")
	}
	for i := 1; i <= 4; i++ {
		first := 1
		if i > 2 {
			first = 3 // another vendor's numbering
		}
		for k := range 2 {
			guid := fmt.Sprintf("%016x", 0x100+i*2+k)
			s.Systems = append(s.Systems, System{Name: fmt.Sprintf("mtlx%03d HCA-%d", i, first+k), GUID: guid, Type: "host"})
			leaf := "00000000000000a1"
			if k == 1 {
				leaf = "00000000000000a2"
			}
			if i == 4 && k == 1 {
				leaf = "00000000000000a3" // a leaf of its own
			}
			link(leaf, "0x"+strings.ToUpper(guid))
		}
	}
	link("00000000000000a1", "00000000000000e1")
	link("00000000000000a3", "00000000000000e2")
	return s
}

// TestRealStyleNames: with default settings, a host is named from its
// systems' system_name by the infiniband provider's rules, a host with
// two HCAs is one node, one rule places hosts whose leaves carry
// different hosts (reported), leaves with equal names stay distinct, the aggregation node is
// ignored and the unnamed HCA is left out with a warning; hcas selects a
// rail by name; switchIDs: name refuses the shared name, naming it.
func TestRealStyleNames(t *testing.T) {
	t.Parallel()
	discover := func(edit func(*Config)) (map[string]string, string, error) {
		cfg := DefaultConfig()
		cfg.Snapshot = realStyle()
		if edit != nil {
			edit(&cfg)
		}
		var logs bytes.Buffer
		p, err := New(cfg, providers.Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		g, err := p.Discover(context.Background(), providers.Request{})
		if err != nil {
			return nil, logs.String(), err
		}
		leaves := map[string]string{}
		for _, n := range g.Nodes() {
			leaves[n.Name] = n.Leaf
		}
		return leaves, logs.String(), nil
	}
	leaves, logs, err := discover(nil)
	if err != nil {
		t.Fatalf("Discover = %v", err)
	}
	// Leaf a1 carries every host, a2 hosts 1-3 and a3 host 4: each host
	// has one HCA in two groups, and goes to the group with fewer hosts.
	want := map[string]string{"mtlx001": "00000000000000a2", "mtlx002": "00000000000000a2", "mtlx003": "00000000000000a2", "mtlx004": "00000000000000a3"}
	if fmt.Sprint(leaves) != fmt.Sprint(want) {
		t.Errorf("leaves = %v, want %v", leaves, want)
	}
	for _, w := range []string{"count=1", `MT4129 ConnectX7   Mellanox Technologies`, "mtlx004 under 00000000000000a3 (not 00000000000000a1)"} {
		if !strings.Contains(logs, w) {
			t.Errorf("log lacks %q:\n%s", w, logs)
		}
	}
	leaves, _, err = discover(func(c *Config) { c.HCAs = []string{"HCA-1", "HCA-3"} })
	if err != nil || leaves["mtlx001"] != "00000000000000a1" || leaves["mtlx004"] != "00000000000000a1" {
		t.Errorf("hcas HCA-1, HCA-3: %v %v, want every host on the first rail's leaf", leaves, err)
	}
	_, _, err = discover(func(c *Config) { c.SwitchIDs = SwitchIDsName })
	if !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), `both called "leaf"`) {
		t.Errorf("switchIDs: name with three leaves called leaf: %v", err)
	}
}
