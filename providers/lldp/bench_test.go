package lldp_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/lldp"
)

// railFabric is a rail-optimized 2-tier Ethernet fabric: hosts with
// `rails` NICs, `perLeaf` hosts a leaf, and per rail one spine for every
// `leavesPerSpine` leaves, each leaf cabled to its rail's spine twice.
type railFabric struct {
	reports []providers.NodeFacts
	walks   map[string][]lldp.Var // by switch name, its address
}

const (
	benchRails          = 8
	benchPerLeaf        = 32
	benchLeavesPerSpine = 32
	capBridgeRouter     = "\x28\x00"
	capStation          = "\x01\x00"
)

func benchMAC(kind, i int) string {
	return fmt.Sprintf("0c:42:%02x:%02x:%02x:%02x", kind, i>>16&255, i>>8&255, i&255)
}

// macBytes is the 6 octets of a colon-separated MAC address.
func macBytes(s string) []byte {
	mac := make([]byte, 6)
	_, _ = fmt.Sscanf(s, "%02x:%02x:%02x:%02x:%02x:%02x", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4], &mac[5])
	return mac
}

// addRemote appends one lldpRemTable row (and its sysName) to vars.
func addRemote(vars []lldp.Var, port, index int, chassis, portID, sysName, caps string) []lldp.Var {
	idx := fmt.Sprintf("0.%d.%d", port, index)
	mac := macBytes(chassis)
	row := lldp.OIDRemote + ".1.1."
	return append(vars,
		lldp.Var{OID: row + "4." + idx, Int: 4},
		lldp.Var{OID: row + "5." + idx, Bytes: mac},
		lldp.Var{OID: row + "6." + idx, Int: 5},
		lldp.Var{OID: row + "7." + idx, Bytes: []byte(portID)},
		lldp.Var{OID: row + "9." + idx, Bytes: []byte(sysName)},
		lldp.Var{OID: row + "12." + idx, Bytes: []byte(caps)},
	)
}

func localVars(chassis, name string) []lldp.Var {
	mac := macBytes(chassis)
	return []lldp.Var{
		{OID: lldp.OIDLocal + ".1.0", Int: 4},
		{OID: lldp.OIDLocal + ".2.0", Bytes: mac},
		{OID: lldp.OIDLocal + ".3.0", Bytes: []byte(name)},
	}
}

func newRailFabric(hosts int) *railFabric {
	f := &railFabric{walks: map[string][]lldp.Var{}}
	leaves := (hosts + benchPerLeaf - 1) / benchPerLeaf
	spines := (leaves + benchLeavesPerSpine - 1) / benchLeavesPerSpine
	leafName := func(rail, l int) string { return fmt.Sprintf("leaf-r%d-%05d", rail, l) }
	spineName := func(rail, s int) string { return fmt.Sprintf("spine-r%d-%03d", rail, s) }
	leafMAC := func(rail, l int) string { return benchMAC(rail, l) }
	spineMAC := func(rail, s int) string { return benchMAC(0x80+rail, s) }
	for rail := range benchRails {
		for l := range leaves {
			name := leafName(rail, l)
			f.walks[name] = localVars(leafMAC(rail, l), name)
		}
		for s := range spines {
			name := spineName(rail, s)
			f.walks[name] = localVars(spineMAC(rail, s), name)
		}
	}
	for h := range hosts {
		node := fmt.Sprintf("gpu-%06d", h)
		l := h / benchPerLeaf
		r := providers.NodeFacts{Node: node, GPUs: 8}
		for rail := range benchRails {
			port := fmt.Sprintf("swp%d", h%benchPerLeaf+1)
			r.LLDP = append(r.LLDP, providers.LLDPNeighbor{
				Interface: fmt.Sprintf("ens%dnp0", rail), ChassisID: leafMAC(rail, l), ChassisIDType: "mac",
				SysName: leafName(rail, l), PortID: port, PortIDType: "ifname",
			})
			name := leafName(rail, l)
			f.walks[name] = addRemote(f.walks[name], h%benchPerLeaf+1, 1, benchMAC(0xff, h), fmt.Sprintf("ens%dnp0", rail), node, capStation)
		}
		f.reports = append(f.reports, r)
	}
	for rail := range benchRails {
		for l := range leaves {
			s := l / benchLeavesPerSpine
			for k := range 2 {
				leaf, spine := leafName(rail, l), spineName(rail, s)
				f.walks[leaf] = addRemote(f.walks[leaf], 100+k, 1, spineMAC(rail, s), fmt.Sprintf("swp%d", 2*(l%benchLeavesPerSpine)+k+1), spine, capBridgeRouter)
				f.walks[spine] = addRemote(f.walks[spine], 2*(l%benchLeavesPerSpine)+k+1, 1, leafMAC(rail, l), fmt.Sprintf("swp%d", 100+k), leaf, capBridgeRouter)
			}
		}
	}
	return f
}

// Walk serves a switch's variables under root.
func (f *railFabric) Walk(ctx context.Context, host string, _ int, root string, fn func(lldp.Var) error) error {
	for _, v := range f.walks[host] {
		if strings.HasPrefix(v.OID, root+".") {
			if err := fn(v); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// BenchmarkDiscover discovers a rail-optimized fabric of 8 rails: the
// hosts' reports, every leaf's and spine's LLDP-MIB decoded, the tree
// reduced. Walks are served from memory, so it measures toposcope's
// work, not the switches'.
func BenchmarkDiscover(b *testing.B) {
	for _, hosts := range []int{1024, 10240, 102400} {
		b.Run(fmt.Sprintf("hosts=%d", hosts), func(b *testing.B) {
			f := newRailFabric(hosts)
			addrs := map[string]string{}
			for name := range f.walks {
				addrs[name] = name
			}
			cfg := lldp.DefaultConfig()
			cfg.Reports = f.reports
			cfg.SNMP = &lldp.SNMP{CommunityFile: secretFile(b, "community", community), Addresses: addrs, MaxSwitches: 100000}
			p, err := lldp.NewWithWalker(cfg, providers.Deps{Logger: slog.New(slog.DiscardHandler)}, f)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				g, err := p.Discover(b.Context(), providers.Request{})
				if err != nil {
					b.Fatal(err)
				}
				if len(g.Nodes()) != hosts || len(g.Path("gpu-000000")) != 2 {
					b.Fatalf("%d nodes, path %v", len(g.Nodes()), g.Path("gpu-000000"))
				}
			}
		})
	}
}
