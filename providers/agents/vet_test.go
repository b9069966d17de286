package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
)

// drops records providers.DropObserver calls.
type drops struct {
	providers.Observer
	n map[string]int
}

func (d *drops) Dropped(provider, reason string, n int) { d.n[provider+"/"+reason] += n }

// TestDiscoverDropsBadReports: a report that cannot be used (a malformed
// clique, an empty switch, a path that disagrees with the others) costs
// its own node's facts, counted, and never the discovery.
func TestDiscoverDropsBadReports(t *testing.T) {
	t.Parallel()
	now := time.Now()
	d := deps(reports{
		{Facts: providers.NodeFacts{Node: "gb01", Clique: "no-dot"}, ReceivedAt: now},
		{Facts: providers.NodeFacts{Node: "gb02", Clique: clique, GPUs: 4, Fabric: []string{"l1", "s1"}}, ReceivedAt: now},
		{Facts: providers.NodeFacts{Node: "gb03", Clique: clique, GPUs: 4, Fabric: []string{"l1", "s1"}}, ReceivedAt: now},
		{Facts: providers.NodeFacts{Node: "gb04", GPUs: 4, Fabric: []string{"s1", "l1"}}, ReceivedAt: now},
		{Facts: providers.NodeFacts{Node: "ghost01", Fabric: []string{""}}, ReceivedAt: now},
	}, now)
	obs := &drops{n: map[string]int{}}
	d.Observer = obs
	p, err := agents.New(agents.DefaultConfig(), d)
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{Nodes: []providers.NodeRef{{Name: "gb01"}, {Name: "gb02"}, {Name: "gb03"}, {Name: "gb04"}}})
	if err != nil {
		t.Fatalf("Discover = %v, want the bad reports dropped", err)
	}
	if n, ok := g.Node("gb01"); !ok || n.Domain != "" {
		t.Errorf("gb01 (bad clique) = %+v, %v: want it kept, as requested, without facts", n, ok)
	}
	if n, ok := g.Node("gb04"); !ok || n.Leaf != "" || n.GPUs != 4 {
		t.Errorf("gb04 (reversed path) = %+v, %v: want its GPUs without its path", n, ok)
	}
	if n, ok := g.Node("gb02"); !ok || n.Leaf != "l1" || n.Domain == "" {
		t.Errorf("gb02 = %+v, %v", n, ok)
	}
	if _, ok := g.Node("ghost01"); ok {
		t.Error("ghost01 (not requested, invalid) is in the graph")
	}
	if want := map[string]int{"agents/invalid": 2, "agents/fabric_conflict": 1}; fmt.Sprint(obs.n) != fmt.Sprint(want) {
		t.Errorf("dropped = %v, want %v", obs.n, want)
	}
}

func TestCheckFactsNamesEveryField(t *testing.T) {
	t.Parallel()
	f := providers.NodeFacts{
		Node: "gpu01", Zone: "a\x00b", GPUs: -1, Clique: "x",
		HCAs:   []providers.HCA{{Name: "mlx5_0", NodeGUID: "0x1"}},
		Fabric: []string{"l1", ""},
	}
	err := agents.CheckFacts(f)
	if !errors.Is(err, agents.ErrInvalidFacts) || !errors.Is(err, config.ErrInvalid) {
		t.Fatalf("CheckFacts = %v, want ErrInvalidFacts and config.ErrInvalid", err)
	}
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *config.FieldError
		if errors.As(e, &fe) {
			fields = append(fields, fe.Field)
		}
	}
	if got := fmt.Sprint(fields); got != "[zone gpus clique hcas[0].nodeGUID fabric[1]]" {
		t.Errorf("fields = %s", got)
	}
	if err := agents.CheckFacts(providers.NodeFacts{Node: "gpu-01.rack-2_a", GPUs: agents.MaxGPUs, Fabric: []string{"ocid1.localblock.oc1..aaaa", "nb1"}}); err != nil {
		t.Errorf("CheckFacts(valid) = %v", err)
	}
}

// FuzzAgentReport: whatever a report holds, discovery never fails for
// it; a report CheckFacts accepts keeps its node in the graph, with its
// GPUs.
func FuzzAgentReport(f *testing.F) {
	for _, seed := range []string{
		`{"node":"gpu01","gpus":8,"fabric":["l1","s1"]}`,
		`{"node":"ghost01","fabric":[""]}`,
		`{"node":"gpu02","fabric":["s1","l1"],"clique":"` + clique + `","rack":"r1"}`,
		`{"node":"gpu03","gpus":9223372036854775807}`,
		`{"node":"ünïcødé-ノード-😀","zone":"a\u0000b"}`,
		`{"node":"gpu04","hcas":[{"name":"mlx5_0","nodeGUID":"0c42a10300a1b2c3"}],"fabric":["s1"]}`,
		`{"node":"gpu05","lldp":[{"interface":"eth0","chassisID":"aa","portID":"swp1","sysName":"leaf01"}]}`,
	} {
		f.Add([]byte(seed))
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, data []byte) {
		var facts providers.NodeFacts
		if json.Unmarshal(data, &facts) != nil {
			return
		}
		ok := agents.CheckFacts(facts) == nil
		src := reports{
			{Facts: providers.NodeFacts{Node: "gpu90", GPUs: 8, Fabric: []string{"l1", "s1"}}, ReceivedAt: now},
			{Facts: facts, ReceivedAt: now},
			{Facts: providers.NodeFacts{Node: "gpu91", GPUs: 8, Fabric: []string{"l2", "s1"}}, ReceivedAt: now},
		}
		p, err := agents.New(agents.DefaultConfig(), deps(src, now))
		if err != nil {
			t.Fatal(err)
		}
		g, err := p.Discover(context.Background(), providers.Request{})
		if err != nil {
			t.Fatalf("Discover with %q = %v", data, err)
		}
		if n, found := g.Node(facts.Node); ok && (!found || n.GPUs != facts.GPUs) {
			t.Errorf("valid report %q: node %+v, found %v", data, n, found)
		}
	})
}

// TestCheckLLDP: a report's LLDP neighbors are bounded and named field
// by field.
func TestCheckLLDP(t *testing.T) {
	t.Parallel()
	good := providers.LLDPNeighbor{Interface: "ens4f0np0", ChassisID: "0c:42:a1:00:00:01", ChassisIDType: "mac", SysName: "leaf01",
		PortID: "swp17", PortIDType: "ifname", PortDescr: "rail 0 port 17", MgmtIPs: []string{"10.0.0.1", "fe80::1"}}
	many := make([]providers.LLDPNeighbor, agents.MaxLLDP+1)
	for i := range many {
		many[i] = good
		many[i].Interface = fmt.Sprintf("eth%d", i)
	}
	tests := []struct {
		name  string
		lldp  []providers.LLDPNeighbor
		field string
	}{
		{"good", []providers.LLDPNeighbor{good}, ""},
		{"too many", many, "lldp"},
		{"no chassis ID", []providers.LLDPNeighbor{{Interface: "eth0", PortID: "p"}}, "lldp[0].chassisID"},
		{"no port ID", []providers.LLDPNeighbor{{Interface: "eth0", ChassisID: "c"}}, "lldp[0].portID"},
		{"interface twice", []providers.LLDPNeighbor{good, good}, "lldp[1].interface"},
		{"interface with a slash", []providers.LLDPNeighbor{{Interface: "a/b", ChassisID: "c", PortID: "p"}}, "lldp[0].interface"},
		{"long system name", []providers.LLDPNeighbor{{Interface: "eth0", ChassisID: "c", PortID: "p", SysName: strings.Repeat("s", 129)}}, "lldp[0].sysName"},
		{"control character", []providers.LLDPNeighbor{{Interface: "eth0", ChassisID: "c", PortID: "p", PortDescr: "a\nb"}}, "lldp[0].portDescr"},
		{"not an address", []providers.LLDPNeighbor{{Interface: "eth0", ChassisID: "c", PortID: "p", MgmtIPs: []string{"leaf01"}}}, "lldp[0].mgmtIPs[0]"},
		{"three addresses", []providers.LLDPNeighbor{{Interface: "eth0", ChassisID: "c", PortID: "p", MgmtIPs: []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}}}, "lldp[0].mgmtIPs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := agents.CheckFacts(providers.NodeFacts{Node: "gpu01", LLDP: tt.lldp})
			var fe *config.FieldError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("CheckFacts = %v, want nil", err)
			case tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field):
				t.Fatalf("CheckFacts = %v, want an error naming %s", err, tt.field)
			}
		})
	}
}
