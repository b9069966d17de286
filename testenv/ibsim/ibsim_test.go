package ibsim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/topology"
)

func mustModel(t *testing.T, spec ModelSpec) *topology.Graph {
	t.Helper()
	g, err := Model(spec)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// twoLeaves is a spine over two leaves of two hosts each.
func twoLeaves() ModelSpec {
	return ModelSpec{
		Links:  []string{"spine>leaf1", "spine>leaf2"},
		Leaves: map[string]string{"leaf1": "gpu[001-002]", "leaf2": "gpu[003-004]"},
		Speeds: map[string]uint32{"leaf1": 40, "leaf2": 20},
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		x                Expansion
		switches, hcas   int
		cables           int
		netFileFragments []string
	}{
		{"plain", Expansion{}, 3, 4, 6, []string{
			"switchguid=0x2c5eab0300000001\nSwitch\t36 \"leaf1\"\t\t# \"MF0;leaf1:MQM9700/U1\"\n[1]\t\"spine\"[1]\ts=4\n",
			"caguid=0xe09d730300000010\nCa\t1 \"gpu001/mlx5_0\"\t\t# \"gpu001 mlx5_0\"\n[1]\t\"leaf1\"[2]\ts=4\n",
			"Switch\t36 \"spine\"\t\t# \"MF0;spine:MQM9700/U1\"\n[1]\t\"leaf1\"[1]\ts=4\n[2]\t\"leaf2\"[1]\ts=2\n",
		}},
		{"redundant spines and rails", Expansion{Redundancy: []int{0, 3}, Rails: 2}, 4 + 3, 8, 4*3 + 8, []string{
			"\"leaf1-r1\"", "\"spine-3\"", "# \"gpu004 mlx5_1\"",
		}},
		{"storage rail with servers", Expansion{StorageHCA: "mlx5_4", StorageServers: 1}, 5, 4 + 4 + 2, 6 + 4 + 2 + 2, []string{
			"\"leaf1-stor\"", "# \"gpu001 mlx5_4\"", "# \"leaf2-stor-srv1 mlx5_0\"",
		}},
		{"shared storage leaf", Expansion{StorageHCA: "mlx5_4", StorageShared: true}, 4, 8, 6 + 4 + 1, []string{"\"storage\""}},
		{"missing cables", Expansion{Omit: []string{"spine leaf2", "gpu003/mlx5_0 leaf2"}}, 3, 4, 4, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := Expand(mustModel(t, twoLeaves()), tt.x)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Switches) != tt.switches || len(f.HCAs) != tt.hcas || len(f.Cables) != tt.cables {
				t.Fatalf("%d switches, %d HCAs, %d cables", len(f.Switches), len(f.HCAs), len(f.Cables))
			}
			net, err := f.NetFile()
			if err != nil {
				t.Fatal(err)
			}
			for _, frag := range tt.netFileFragments {
				if !strings.Contains(string(net), frag) {
					t.Errorf("net file lacks %q:\n%s", frag, net)
				}
			}
			if l, ok := f.Logical(f.Switches[0].ID); !ok || l != "leaf1" {
				t.Errorf("Logical(%s) = %q", f.Switches[0].ID, l)
			}
			if l, ok := f.Logical("2c5eab0300000001"); !ok || l != "leaf1" {
				t.Errorf("Logical(guid) = %q", l)
			}
		})
	}
}

func TestExpandRejectsUnsimulatedSpeeds(t *testing.T) {
	t.Parallel()
	spec := twoLeaves()
	spec.Speeds = map[string]uint32{"leaf1": 400}
	if _, err := Expand(mustModel(t, spec), Expansion{}); err == nil || !strings.Contains(err.Error(), "10, 20 or 40") {
		t.Fatalf("Expand() = %v", err)
	}
}

func TestNetFileErrors(t *testing.T) {
	t.Parallel()
	f := &Fabric{
		Switches: []Switch{{ID: "a", Description: "x", GUID: 1, Ports: 2}, {ID: "a", GUID: 2, Ports: 1}},
		HCAs:     []HCA{{ID: "h#1", Host: "h", Name: "mlx5_0", GUID: 16, Ports: 1}},
		Cables:   []Cable{{A: "a", APort: 1, B: "h#1", BPort: 1}, {A: "a", APort: 1, B: "a", BPort: 2}, {A: "a", APort: 9, B: "zz", BPort: 1}},
	}
	_, err := f.NetFile()
	for _, want := range []string{`port 1 of "a" is cabled twice`, `node ID "a" used twice`, `no port 9 on "a"`, `no port 1 on "zz"`, `without " # @`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NetFile() = %v, want %q", err, want)
		}
	}
}

func TestConnect(t *testing.T) {
	t.Parallel()
	f := &Fabric{Switches: []Switch{{ID: "s", Ports: 1}}, HCAs: []HCA{{ID: "h", Ports: 1}}}
	if err := f.Connect("s", "h", QDR); err != nil {
		t.Fatal(err)
	}
	if err := f.Connect("s", "h", QDR); err == nil {
		t.Error("a second cable on a one-port HCA")
	}
	if err := f.Connect("s", "nope", QDR); err == nil {
		t.Error("unknown node")
	}
	if len(f.Cables) != 1 || f.Cables[0] != (Cable{A: "s", APort: 1, B: "h", BPort: 1, Speed: QDR}) {
		t.Errorf("cables %+v", f.Cables)
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	model := mustModel(t, twoLeaves())
	f, err := Expand(model, Expansion{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Compare(model, model, &Fabric{logical: map[string]string{"spine": "spine", "leaf1": "leaf1", "leaf2": "leaf2"}}); err != nil {
		t.Errorf("a model equals itself: %v", err)
	}
	wrong := mustModel(t, ModelSpec{
		Links:  []string{"spine>leaf1", "spine>leaf2"},
		Leaves: map[string]string{"leaf1": "gpu[001-003]", "leaf2": "gpu004"},
		Speeds: map[string]uint32{"leaf1": 40, "leaf2": 40},
	})
	err = Compare(wrong, model, f)
	for _, want := range []string{"node gpu003 is under [leaf1 spine], want [leaf2 spine]", "switch leaf2 (leaf2) has uplink 40 Gb/s, want 20"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compare() = %v, want %q", err, want)
		}
	}
}

func TestModelErrors(t *testing.T) {
	t.Parallel()
	for _, spec := range []ModelSpec{
		{Links: []string{"a-b"}},
		{Leaves: map[string]string{"l": "gpu[1-"}},
		{Unplaced: "x["},
		{Links: []string{"a>b", "b>a"}},
	} {
		if _, err := Model(spec); err == nil {
			t.Errorf("Model(%+v) succeeded", spec)
		}
	}
}

// TestStartAndDiscover runs the real ibnetdiscover on a small fabric.
func TestStartAndDiscover(t *testing.T) {
	t.Parallel()
	Require(t)
	f, err := Expand(mustModel(t, twoLeaves()), Expansion{Redundancy: []int{0, 2}, Rails: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := Start(t, f)
	if s.PID() <= 0 || !strings.HasPrefix(s.SocketName(), "toposcope-") {
		t.Errorf("pid %d socket %q", s.PID(), s.SocketName())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := s.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`# "gpu004 mlx5_1"`, `"MF0;spine-2:MQM9700/U1" lid 0 4xQDR`, `"MF0;leaf2-r0:MQM9700/U1" lid 0 4xDDR`, "caguid=0xe09d730300000010"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("ibnetdiscover output lacks %q", want)
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestParallelSimulators runs two simulators at once: each has its own
// socket name, so each ibnetdiscover sees its own fabric.
func TestParallelSimulators(t *testing.T) {
	t.Parallel()
	Require(t)
	one, err := Expand(mustModel(t, ModelSpec{Leaves: map[string]string{"solo": "one001"}}), Expansion{})
	if err != nil {
		t.Fatal(err)
	}
	two, err := Expand(mustModel(t, twoLeaves()), Expansion{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := Start(t, one), Start(t, two)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	outA, errA := a.Discover(ctx)
	outB, errB := b.Discover(ctx)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if !strings.Contains(string(outA), "one001 mlx5_0") || strings.Contains(string(outA), "gpu001") ||
		!strings.Contains(string(outB), "gpu001 mlx5_0") || strings.Contains(string(outB), "one001") {
		t.Errorf("simulators mixed up:\n%s\n%s", outA, outB)
	}
}

func TestStartRejectsBadFabric(t *testing.T) {
	t.Parallel()
	Require(t)
	bad := &Fabric{Switches: []Switch{{ID: "s", Ports: 1}}, Cables: []Cable{{A: "s", APort: 1, B: "ghost", BPort: 1}}}
	if _, err := start(t.TempDir(), bad); err == nil || !strings.Contains(err.Error(), `no port 1 on "ghost"`) {
		t.Fatalf("start(cable to nowhere) = %v", err)
	}
	// A node with no ports passes NetFile but makes ibsim's parser fail:
	// Start reports ibsim's own output.
	zero := &Fabric{Switches: []Switch{{ID: "s", Ports: 1}}, HCAs: []HCA{{ID: "h", Host: "h", Name: "x", Ports: 0}}}
	_, err := start(t.TempDir(), zero)
	if err == nil || !strings.Contains(err.Error(), "ibsim exited before the fabric was ready") {
		t.Fatalf("start(zero ports) = %v", err)
	}
}
