package infiniband

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/toposcope/toposcope/providers"
)

// fatTreeSpec sizes a generated three-tier fat tree: pods of leaves and
// spines (every leaf cabled to every spine of its pod), and cores in
// planes (spine i of every pod cabled to every core of plane i).
type fatTreeSpec struct {
	pods, leavesPerPod, hostsPerLeaf, spinesPerPod, coresPerPlane int
}

// bench4096 is the benchmark fabric: 4,096 hosts on 128 leaves in 8
// pods, 128 spines and 128 cores (NDR, 64-port switches).
func bench4096() fatTreeSpec {
	return fatTreeSpec{pods: 8, leavesPerPod: 16, hostsPerLeaf: 32, spinesPerPod: 16, coresPerPlane: 8}
}

// generate returns the ibnetdiscover output of the fat tree.
func generate(s fatTreeSpec) []byte {
	t := &Topology{index: map[uint64]int{}}
	add := func(n Node) *Node {
		t.index[n.GUID] = len(t.Nodes)
		t.Nodes = append(t.Nodes, n)
		return &t.Nodes[len(t.Nodes)-1]
	}
	const swBase, caBase = 0x2c5eab0300000000, 0xe09d730300000000
	sw := func(kind string, i int) uint64 {
		return swBase + map[string]uint64{"leaf": 0x100000, "spine": 0x200000, "core": 0x300000}[kind] + uint64(i)
	}
	desc := func(kind string, i int) string { return fmt.Sprintf("MF0;%s-%04d:MQM9790/U1", kind, i) }
	// cable records both ends; ports are allocated in order.
	next := map[uint64]int{}
	type end struct {
		guid uint64
		typ  NodeType
		desc string
	}
	var cables [][2]end
	cable := func(a, b end) { cables = append(cables, [2]end{a, b}) }
	leaves, spines := s.pods*s.leavesPerPod, s.pods*s.spinesPerPod
	for l := range leaves {
		add(Node{Type: Switch, GUID: sw("leaf", l), Ports: 64, Description: desc("leaf", l)})
	}
	for i := range spines {
		add(Node{Type: Switch, GUID: sw("spine", i), Ports: 64, Description: desc("spine", i)})
	}
	for c := range s.spinesPerPod * s.coresPerPlane {
		add(Node{Type: Switch, GUID: sw("core", c), Ports: 64, Description: desc("core", c)})
	}
	for l := range leaves {
		for h := range s.hostsPerLeaf {
			n := l*s.hostsPerLeaf + h
			g := caBase + uint64(n+1)*0x10
			d := fmt.Sprintf("gpu%05d mlx5_0", n+1)
			add(Node{Type: CA, GUID: g, Ports: 1, Description: d})
			cable(end{g, CA, d}, end{sw("leaf", l), Switch, desc("leaf", l)})
		}
		pod := l / s.leavesPerPod
		for i := range s.spinesPerPod {
			sp := pod*s.spinesPerPod + i
			cable(end{sw("leaf", l), Switch, desc("leaf", l)}, end{sw("spine", sp), Switch, desc("spine", sp)})
		}
	}
	for sp := range spines {
		plane := sp % s.spinesPerPod
		for c := range s.coresPerPlane {
			core := plane*s.coresPerPlane + c
			cable(end{sw("spine", sp), Switch, desc("spine", sp)}, end{sw("core", core), Switch, desc("core", core)})
		}
	}
	for _, c := range cables {
		a, b := c[0], c[1]
		next[a.guid]++
		next[b.guid]++
		pa, pb := next[a.guid], next[b.guid]
		la := Link{Port: pa, PeerType: b.typ, PeerGUID: b.guid, PeerPort: pb, PeerDescription: b.desc, Width: 4, Speed: "NDR"}
		lb := Link{Port: pb, PeerType: a.typ, PeerGUID: a.guid, PeerPort: pa, PeerDescription: a.desc, Width: 4, Speed: "NDR"}
		if a.typ == CA {
			la.PortGUID, lb.PeerPortGUID = a.guid, a.guid
		}
		t.Nodes[t.index[a.guid]].Links = append(t.Nodes[t.index[a.guid]].Links, la)
		t.Nodes[t.index[b.guid]].Links = append(t.Nodes[t.index[b.guid]].Links, lb)
	}
	return format(t)
}

func TestGeneratedFatTree(t *testing.T) {
	t.Parallel()
	small := fatTreeSpec{pods: 3, leavesPerPod: 2, hostsPerLeaf: 2, spinesPerPod: 2, coresPerPlane: 2}
	for _, s := range []fatTreeSpec{small, bench4096()} {
		p, err := New(Config{OutputText: string(generate(s)), Timeout: 1, NamingRules: NamingRules{HostPattern: DefaultHostPattern}, SwitchIDs: SwitchIDsGUID},
			providers.Deps{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := p.Discover(context.Background(), providers.Request{})
		if err != nil {
			t.Fatal(err)
		}
		leaves, pods := s.pods*s.leavesPerPod, s.pods
		if len(g.Nodes()) != leaves*s.hostsPerLeaf || len(g.Switches()) != leaves+pods+1 || g.Depth() != 3 ||
			len(g.Roots()) != 1 || len(g.Roots()[0].Children) != pods || g.Switches()[0].LinkSpeedGbps != 400 {
			t.Errorf("%+v: %d nodes, %d switches, depth %d, %d roots", s, len(g.Nodes()), len(g.Switches()), g.Depth(), len(g.Roots()))
		}
	}
}

// BenchmarkParseAndBuild parses the ibnetdiscover output of a 4,096-host
// three-tier fat tree and builds the graph (target: < 1 s).
func BenchmarkParseAndBuild(b *testing.B) {
	data := generate(bench4096())
	p, err := New(Config{OutputText: string(data), Timeout: 1, NamingRules: NamingRules{HostPattern: DefaultHostPattern}, SwitchIDs: SwitchIDsGUID},
		providers.Deps{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Discover(context.Background(), providers.Request{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse measures the parser alone on the same output.
func BenchmarkParse(b *testing.B) {
	data := generate(bench4096())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(data), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
