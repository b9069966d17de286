package slurm

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
)

func TestParseVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Version
		wantErr bool
	}{
		{"22.05", 2205, false},
		{"23.11", V2311, false},
		{"24.05", V2405, false},
		{"24.11", V2411, false},
		{"24.11.5", V2411, false},
		{" 25.05 ", V2505, false},
		{"25.11", 2511, false},
		{"26.05", 2605, false},
		{"24", 0, true},
		{"24.13", 0, true},
		{"24.00", 0, true},
		{"x.05", 0, true},
		{"24.+5", 0, true},
		{"1.2.3.4", 0, true},
		{"", 0, true},
		{"9.05", 0, true},
		{"24.06", 0, true}, // a month with no release
		{"27.05", 0, true}, // not released
		{"99.11", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseVersion(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrVersion) {
					t.Fatalf("ParseVersion(%q) = %v, %v; want ErrVersion", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseVersion(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if tt.in == "24.11.5" && got.String() != "24.11" {
				t.Errorf("String() = %q", got.String())
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tree := func(name string, def bool) TopologyConfig {
		return TopologyConfig{Name: name, Plugin: KindTree, ClusterDefault: def}
	}
	tests := []struct {
		name string
		edit func(*Config)
		// want are substrings of the error; nil means valid.
		want []string
		// inexpressible says the error must wrap engines.ErrInexpressible.
		inexpressible bool
	}{
		{"default", nil, nil, false},
		{"block 24.11", func(c *Config) { c.Plugin = PluginBlock }, nil, false},
		{"block sizes", func(c *Config) { c.Plugin = PluginBlock; c.BlockSizes = []int{18, 36, 144} }, nil, false},
		{"unknown plugin", func(c *Config) { c.Plugin = "topology/ring" }, []string{"plugin", "unknown plugin"}, false},
		{"bad version", func(c *Config) { c.SlurmVersion = "24" }, []string{"slurmVersion", "major.minor"}, false},
		{"block needs 23.11", func(c *Config) { c.Plugin = PluginBlock; c.SlurmVersion = "23.02" }, []string{"plugin", "23.11", "23.02"}, true},
		{"yaml needs 25.05", func(c *Config) { c.Plugin = PluginYAML }, []string{"plugin", "25.05", "24.11"}, true},
		{"block sizes need 24.05", func(c *Config) { c.Plugin = PluginBlock; c.SlurmVersion = "23.11"; c.BlockSizes = []int{4} },
			[]string{"blockSizes", "24.05", "BlockLevels"}, true},
		{"block sizes for tree", func(c *Config) { c.BlockSizes = []int{4} }, []string{"blockSizes", "only used with plugin topology/block"}, false},
		{"not a power of two", func(c *Config) { c.Plugin = PluginBlock; c.BlockSizes = []int{18, 54} }, []string{"blockSizes", "54 is not the base size 18 times a power of two"}, false},
		{"not ascending", func(c *Config) { c.Plugin = PluginBlock; c.BlockSizes = []int{18, 72, 36} }, []string{"ascending"}, false},
		{"level too high", func(c *Config) { c.Plugin = PluginBlock; c.BlockSizes = []int{1, 1 << 16} }, []string{"2^16", "at most 2^15"}, false},
		{"zero base", func(c *Config) { c.Plugin = PluginBlock; c.BlockSizes = []int{0} }, []string{"must be positive"}, false},
		{"small blocks", func(c *Config) { c.SmallBlocks = "ignore" }, []string{"smallBlocks", "ignore"}, false},
		{"reconfigure without output", func(c *Config) { c.Reconfigure = true }, []string{"reconfigure", "needs output"}, false},
		{"reconfigure without command", func(c *Config) { c.Reconfigure = true; c.Output = "/x"; c.ReconfigureCommand = nil },
			[]string{"reconfigureCommand"}, false},
		{"topologies without yaml", func(c *Config) { c.Topologies = []TopologyConfig{tree("a", true)} }, []string{"topologies", "only used with plugin topology/yaml"}, false},
		{"yaml ok", func(c *Config) {
			c.Plugin, c.SlurmVersion = PluginYAML, "25.05"
			c.Topologies = []TopologyConfig{tree("a", true), {Name: "b", Plugin: KindBlock, Nodes: "gb[01-18]", BlockSizes: []int{18}}, {Name: "c", Plugin: KindFlat}}
		}, nil, false},
		{"yaml two defaults", func(c *Config) {
			c.Plugin, c.SlurmVersion = PluginYAML, "25.05"
			c.Topologies = []TopologyConfig{tree("a", true), tree("b", true)}
		}, []string{"exactly one topology must set clusterDefault: true, 2 do"}, false},
		{"yaml no default", func(c *Config) {
			c.Plugin, c.SlurmVersion = PluginYAML, "25.05"
			c.Topologies = []TopologyConfig{tree("a", false)}
		}, []string{"exactly one", "0 do"}, false},
		{"yaml bad entries", func(c *Config) {
			c.Plugin, c.SlurmVersion = PluginYAML, "25.05"
			c.Topologies = []TopologyConfig{tree("a", true), tree("a", false), {Name: "x:y", Plugin: "ring"},
				{Name: "t", Plugin: KindTree, BlockSizes: []int{2}}, {Name: "n", Plugin: KindTree, Nodes: "n[1-"},
				{Name: "f", Plugin: KindFlat, Nodes: "n1"}, {Plugin: KindTree}}
		}, []string{"topologies[1].name: \"a\" is used twice", "topologies[2].name", "topologies[2].plugin", "topologies[3].blockSizes",
			"topologies[4].nodes", "topologies[5].nodes: is not used by a flat topology", "topologies[6].name: is required"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := DefaultConfig()
			if tt.edit != nil {
				tt.edit(&c)
			}
			err := c.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			var fe *config.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, config.ErrInvalid) {
				t.Errorf("error %v is not a config.FieldError", err)
			}
			if got := errors.Is(err, engines.ErrInexpressible); got != tt.inexpressible {
				t.Errorf("errors.Is(err, ErrInexpressible) = %v, want %v (%v)", got, tt.inexpressible, err)
			}
		})
	}
}

func TestFactory(t *testing.T) {
	t.Parallel()
	f := NewFactory()
	if f.Name != "slurm" || f.Summary == "" {
		t.Fatalf("factory = %+v", f)
	}
	tests := []struct {
		name, doc string
		want      string // error substring; "" means success
	}{
		{"example", f.Example, ""},
		{"empty", "", ""},
		{"block", "plugin: topology/block\nslurmVersion: \"25.05\"\nblockSizes: [18, 36]\noutput: /tmp/t.conf\nreconfigure: true\n", ""},
		{"unknown key", "plugin: topology/tree\nplugn: x\n", "engines[0].params.plugn (line 2): unknown key"},
		{"invalid", "plugin: topology/tree\nslurmVersion: \"24.11\"\nreconfigure: true\n", "engines[0].params.reconfigure (line 3): needs output"},
		{"nested unknown", "plugin: topology/yaml\nslurmVersion: \"25.05\"\ntopologies:\n  - name: a\n    plugin: tree\n    clusterDefault: true\n    sizes: [1]\n", "unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var params *yaml.Node
			if tt.doc != "" {
				var doc yaml.Node
				if err := yaml.Unmarshal([]byte(tt.doc), &doc); err != nil {
					t.Fatal(err)
				}
				params = doc.Content[0]
			}
			e, err := f.New(params, "engines[0].params", engines.Deps{})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if _, ok := e.(*Engine); !ok {
					t.Fatalf("New returned %T", e)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	if c.Plugin != PluginTree || c.SlurmVersion != "24.11" || !c.Header || !c.IDComments ||
		strings.Join(c.ReconfigureCommand, " ") != "scontrol reconfigure" || c.SmallBlocks != "" {
		t.Fatalf("DefaultConfig() = %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, nil)
	if e.ContentType() != "text/plain; charset=utf-8" {
		t.Errorf("ContentType = %q", e.ContentType())
	}
	if y := newEngine(t, func(c *Config) { c.Plugin, c.SlurmVersion = PluginYAML, "25.05" }); y.ContentType() != "application/yaml" {
		t.Errorf("yaml ContentType = %q", y.ContentType())
	}
}
