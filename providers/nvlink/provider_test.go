package nvlink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
	goldenfile "github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fakeRunner answers commands from canned outputs keyed by the command.
type fakeRunner struct {
	mu   sync.Mutex
	out  map[string]string
	err  map[string]error
	seen []string
}

func (f *fakeRunner) Run(_ context.Context, argv []string) ([]byte, error) {
	shell := strings.Join(argv, " ")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, shell)
	if err := f.err[shell]; err != nil {
		return nil, err
	}
	return []byte(f.out[shell]), nil
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func request(names ...string) providers.Request {
	var r providers.Request
	for _, n := range names {
		r.Nodes = append(r.Nodes, providers.NodeRef{Name: n})
	}
	return r
}

func graphJSON(t *testing.T, g *topology.Graph) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOutputDirGolden reads a directory of saved outputs (-q and CSV,
// two NVL72 domains with racks, a PCIe node).
func TestOutputDirGolden(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.OutputDir = "testdata/cluster"
	p, err := New(cfg, providers.Deps{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	got := graphJSON(t, g)
	const path = "testdata/cluster.golden.json"
	goldenfile.Check(t, path, got, *update)
	if len(g.Domains()) != 2 || len(g.NodesWithoutDomain()) != 1 || len(g.Domains()[0].SubDomains) != 1 {
		t.Errorf("domains %+v, without %v", g.Domains(), g.NodesWithoutDomain())
	}
}

func TestCommand(t *testing.T) {
	t.Parallel()
	gb := readFixture(t, "gb200-query.txt")
	run := &fakeRunner{
		out: map[string]string{
			"ssh gpu01 nvidia-smi -q":       gb,
			"ssh gpu02 nvidia-smi -q":       gb,
			"ssh it's nvidia-smi -q":        gb,
			"ssh pending nvidia-smi -q":     readFixture(t, "gb200-in-progress-query.txt"),
			"ssh garbled nvidia-smi -q":     "Segmentation fault\n",
			"ssh mixed nvidia-smi -q":       readFixture(t, "gb200-mixed.csv"),
			"ssh l40s nvidia-smi -q":        readFixture(t, "pcie-query.txt"),
			"ssh one-pending nvidia-smi -q": readFixture(t, "gb200-one-pending-query.txt"),
		},
		err: map[string]error{"ssh down nvidia-smi -q": errors.New("exit status 255: ssh: connect to host down port 22: No route to host")},
	}
	tests := []struct {
		name    string
		nodes   []string
		failed  string
		want    error
		msg     string
		domains int
	}{
		{"reachable nodes", []string{"gpu01", "gpu02", "l40s", "one-pending"}, FailedNodesError, nil, "", 1},
		{"node names pass as one argument", []string{"it's"}, FailedNodesError, nil, "", 1},
		{"unreachable node fails", []string{"gpu01", "down"}, FailedNodesError, providers.ErrUnavailable, "node down: topology source unavailable: exit status 255", 0},
		{"fabric not ready fails", []string{"pending"}, FailedNodesError, ErrFabricNotReady, "node pending:", 0},
		{"garbled output fails", []string{"garbled"}, FailedNodesError, ErrSyntax, "node garbled:", 0},
		{"mixed cliques fail", []string{"mixed"}, FailedNodesError, ErrMixedCliques, "node mixed:", 0},
		{"failed nodes unplaced on request", []string{"gpu01", "down", "pending", "garbled"}, FailedNodesUnplaced, nil, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.Command, cfg.FailedNodes, cfg.Parallel = config.Command{"ssh", "{node}", "nvidia-smi", "-q"}, tt.failed, 2
			var logs bytes.Buffer
			p, err := New(cfg, providers.Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, run)
			if err != nil {
				t.Fatal(err)
			}
			g, err := p.Discover(context.Background(), request(tt.nodes...))
			if tt.want != nil {
				if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("Discover() = %v, want %v with %q", err, tt.want, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Nodes()) != len(tt.nodes) || len(g.Domains()) != tt.domains {
				t.Errorf("%d nodes, %d domains", len(g.Nodes()), len(g.Domains()))
			}
			if tt.failed == FailedNodesUnplaced && !strings.Contains(logs.String(), "nodes left in no domain") {
				t.Errorf("no warning: %s", logs.String())
			}
		})
	}
}

func TestCliquesAndRequests(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Cliques = map[string]string{"a": gb200UUID + ".1", "b": gb200UUID + ".1", "c": gb200UUID + ".2"}
	p, err := New(cfg, providers.Deps{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Domains()) != 2 || !slices.Equal(g.Domains()[0].Nodes, []string{"a", "b"}) {
		t.Errorf("domains %+v", g.Domains())
	}
	g, err = p.Discover(context.Background(), request("c", "stranger"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.NodesWithoutDomain(), []string{"stranger"}) || len(g.Domains()) != 1 {
		t.Errorf("subset: domains %+v, without %v", g.Domains(), g.NodesWithoutDomain())
	}
}

func TestNoNodes(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Command = config.Command{"ssh", "{node}", "nvidia-smi", "-q"}
	p, err := New(cfg, providers.Deps{}, &fakeRunner{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Discover(context.Background(), providers.Request{}); !errors.Is(err, ErrNoNodes) {
		t.Fatalf("Discover() = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Discover(ctx, request("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(c *Config)
		field string
	}{
		{"command", func(c *Config) { c.Command = config.Command{"ssh", "{node}", "nvidia-smi", "-q"} }, ""},
		{"no source", func(*Config) {}, "command"},
		{"two sources", func(c *Config) { c.Command, c.OutputDir = config.Command{"x", "{node}"}, "d" }, "command"},
		{"no placeholder", func(c *Config) { c.Command = config.Command{"nvidia-smi", "-q"} }, "command"},
		{"bad clique", func(c *Config) { c.Cliques = map[string]string{"n1": "nope"} }, "cliques.n1"},
		{"bad node name", func(c *Config) { c.Outputs = map[string]string{"a b": ""} }, "outputs.a b"},
		{"format", func(c *Config) { c.OutputDir, c.Format = "d", "xml" }, "format"},
		{"nodes", func(c *Config) { c.OutputDir, c.Nodes = "d", "n[" }, "nodes"},
		{"parallel", func(c *Config) { c.OutputDir, c.Parallel = "d", 0 }, "parallel"},
		{"timeout", func(c *Config) { c.OutputDir, c.Timeout = "d", 0 }, "timeout"},
		{"failed nodes", func(c *Config) { c.OutputDir, c.FailedNodes = "d", "ignore" }, "failedNodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := DefaultConfig()
			tt.edit(&c)
			err := c.Validate()
			var fe *config.FieldError
			if tt.field == "" && err != nil || tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field) {
				t.Fatalf("Validate() = %v, want field %q", err, tt.field)
			}
		})
	}
}

func TestFactoryExample(t *testing.T) {
	t.Parallel()
	f := NewFactory()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(f.Example), &n); err != nil {
		t.Fatal(err)
	}
	p, err := f.New(n.Content[0], "params", providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes()) != 3 || len(g.Domains()) != 1 || g.Domains()[0].ID != gb200UUID+".32766" {
		t.Errorf("example: %s", graphJSON(t, g))
	}
	if err := yaml.Unmarshal([]byte("noSuchKey: 1"), &n); err != nil {
		t.Fatal(err)
	}
	if _, err := f.New(n.Content[0], "params", providers.Deps{}); !errors.Is(err, config.ErrInvalid) {
		t.Errorf("unknown key: %v", err)
	}
}

// TestFabricThatDidNotComeUp: a node whose GPUs' fabric completed with
// "Insufficient Resources" is kept, with its GPUs, out of its NVLink
// domain, with a warning naming the node and the status; with the
// default failedNodes: error the discovery still succeeds.
func TestFabricThatDidNotComeUp(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Command = config.Command{"ssh", "{node}", "nvidia-smi", "-q"}
	run := &fakeRunner{out: map[string]string{
		"ssh gb01 nvidia-smi -q": readFixture(t, "gb200-query.txt"),
		"ssh gb02 nvidia-smi -q": readFixture(t, "gb200-insufficient-query.txt"),
	}}
	var logs bytes.Buffer
	p, err := New(cfg, providers.Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, run)
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), request("gb01", "gb02"))
	if err != nil {
		t.Fatalf("Discover = %v, want gb02 left out of its domain", err)
	}
	if n, _ := g.Node("gb02"); n.Domain != "" || n.GPUs != 4 {
		t.Errorf("gb02 = %+v, want 4 GPUs in no domain", n)
	}
	if n, _ := g.Node("gb01"); n.Domain == "" {
		t.Errorf("gb01 = %+v, want it in its domain", n)
	}
	if !strings.Contains(logs.String(), "node=gb02") || !strings.Contains(logs.String(), `status \"Insufficient Resources\"`) {
		t.Errorf("the warning should name gb02 and its status:\n%s", logs.String())
	}
}
