package infiniband

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/providers"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(c *Config)
		field string // "" means valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"file", func(c *Config) { c.Output = "/tmp/x.out" }, ""},
		{"two sources", func(c *Config) { c.Output = "x"; c.Command = config.Command{"ibnetdiscover"} }, "output"},
		{"empty program", func(c *Config) { c.Command = config.Command{""} }, "command"},
		{"timeout", func(c *Config) { c.Timeout = 0 }, "timeout"},
		{"host pattern syntax", func(c *Config) { c.HostPattern = "(" }, "hostPattern"},
		{"host pattern without host group", func(c *Config) { c.HostPattern = `^(\S+)` }, "hostPattern"},
		{"hca glob", func(c *Config) { c.HCAs = []string{"mlx5_["} }, "hcas[0]"},
		{"guid", func(c *Config) { c.HCAGUIDs = []string{"0x12", "zz"} }, "hcaGUIDs[1]"},
		{"nodes", func(c *Config) { c.Nodes = "gpu[1-" }, "nodes"},
		{"ignore", func(c *Config) { c.Ignore = []string{"*"} }, "ignore[0]"},
		{"switch IDs", func(c *Config) { c.SwitchIDs = "lid" }, "switchIDs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := DefaultConfig()
			tt.edit(&c)
			err := c.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("Validate() = %v, want an error for %s", err, tt.field)
			}
		})
	}
}

// fakeRunner records the argv it ran and returns canned output.
type fakeRunner struct {
	out  []byte
	err  error
	argv []string
}

func (f *fakeRunner) Run(ctx context.Context, argv []string) ([]byte, error) {
	f.argv = argv
	if _, ok := ctx.Deadline(); !ok {
		return nil, errors.New("no deadline")
	}
	return f.out, f.err
}

func decodeParams(t *testing.T, doc string) Config {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	if err := config.Decode(n.Content[0], &cfg, "params"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestCommandForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc  string
		argv []string
	}{
		{"command: ssh ib01 sudo ibnetdiscover", []string{"ssh", "ib01", "sudo", "ibnetdiscover"}},
		{"command: [ibsim-run, ibnetdiscover]", []string{"ibsim-run", "ibnetdiscover"}},
		{"timeout: 1m", []string{"ibnetdiscover"}},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			t.Parallel()
			run := &fakeRunner{out: []byte(exampleOutput)}
			p, err := New(decodeParams(t, tt.doc), providers.Deps{}, run)
			if err != nil {
				t.Fatal(err)
			}
			g, err := p.Discover(context.Background(), providers.Request{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(run.argv, tt.argv) || len(g.Nodes()) != 4 {
				t.Errorf("ran %q, %d nodes", run.argv, len(g.Nodes()))
			}
		})
	}
}

func TestFactory(t *testing.T) {
	t.Parallel()
	f := NewFactory()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("command: {a: 1}"), &n); err != nil {
		t.Fatal(err)
	}
	if _, err := f.New(n.Content[0], "params", providers.Deps{}); !errors.Is(err, config.ErrInvalid) {
		t.Errorf("command mapping: %v", err)
	}
	// A command string with shell syntax is refused, not run by a shell.
	if err := yaml.Unmarshal([]byte("command: \"ssh ib01 'sudo ibnetdiscover' | tee x\""), &n); err != nil {
		t.Fatal(err)
	}
	if _, err := f.New(n.Content[0], "params", providers.Deps{}); !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "without a shell") {
		t.Errorf("command with shell syntax: %v, want an invalid command run without a shell", err)
	}
	if err := yaml.Unmarshal([]byte("hcas: [mlx5_0]\nswitchIDs: nope\n"), &n); err != nil {
		t.Fatal(err)
	}
	_, err := f.New(n.Content[0], "params", providers.Deps{})
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "params.switchIDs (line 2)") {
		t.Errorf("bad switchIDs: %v", err)
	}
}

func TestDiscoverSourceErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  *fakeRunner
		cfg  func(c *Config)
		want error
		msg  string
	}{
		{"command fails", &fakeRunner{err: errors.New("exit status 1: ibwarn: mad_rpc_open_port failed")}, nil,
			providers.ErrUnavailable, `command "ibnetdiscover": topology source unavailable: exit status 1: ibwarn`},
		{"command prints nothing", &fakeRunner{out: []byte("\n")}, nil, providers.ErrUnavailable, "printed nothing"},
		{"garbled output", &fakeRunner{out: []byte("Switch\t8 \"S-01\"\t\t# \"x\" base port 0 lid 1 lmc 0\n[1] junk\n")}, nil,
			ErrSyntax, `command "ibnetdiscover":2: malformed`},
		{"missing file", &fakeRunner{}, func(c *Config) { c.Output = "testdata/nope.out" }, os.ErrNotExist, "testdata/nope.out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			p, err := New(cfg, providers.Deps{}, tt.run)
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Discover(context.Background(), providers.Request{})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Discover() = %v, want %v with %q", err, tt.want, tt.msg)
			}
		})
	}
}

func TestDiscoverCancelled(t *testing.T) {
	t.Parallel()
	p, err := New(Config{OutputText: exampleOutput, Timeout: time.Minute, NamingRules: NamingRules{HostPattern: DefaultHostPattern}, SwitchIDs: SwitchIDsGUID},
		providers.Deps{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Discover(ctx, providers.Request{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Discover() = %v", err)
	}
}

// goldenCase is a testdata/<name>.yaml file.
type goldenCase struct {
	Output  string         `yaml:"output"`
	Params  map[string]any `yaml:"params"`
	Request string         `yaml:"request"`
}

// TestGolden discovers every testdata/<name>.yaml case (fixtures of the
// real ibnetdiscover among them) and compares the graph, or the error,
// with testdata/<name>.golden.json or .err.
func TestGolden(t *testing.T) {
	t.Parallel()
	cases, _ := filepath.Glob("testdata/*.yaml")
	if len(cases) == 0 {
		t.Fatal("no golden cases")
	}
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var gc goldenCase
			if err := yaml.Unmarshal(data, &gc); err != nil {
				t.Fatal(err)
			}
			params := map[string]any{"output": filepath.Join("testdata", gc.Output)}
			for k, v := range gc.Params {
				params[k] = v
			}
			p := newFromParams(t, params)
			var req providers.Request
			if gc.Request != "" {
				names, err := hostlist.Expand(gc.Request)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range names {
					req.Nodes = append(req.Nodes, providers.NodeRef{Name: n})
				}
			}
			g, err := p.Discover(context.Background(), req)
			if err != nil {
				golden(t, name+".err", []byte(err.Error()+"\n"))
				return
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", "  ")
			if err := enc.Encode(g); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".golden.json", buf.Bytes())
		})
	}
}
