package config_test

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
)

type inner struct {
	Depth int `yaml:"depth"`
}

type sample struct {
	Model  string   `yaml:"model"`
	Sizes  []int    `yaml:"sizes"`
	Inner  inner    `yaml:"inner"`
	Output string   `yaml:"output"`
	Tags   []string `yaml:"tags"`
}

func (s *sample) Validate() error {
	var errs []error
	if s.Model == "" {
		errs = append(errs, config.Errorf("model", "is required"))
	}
	if s.Inner.Depth < 0 {
		errs = append(errs, config.Errorf("inner.depth", "must not be negative, got %d", s.Inner.Depth))
	}
	return errors.Join(errs...)
}

func node(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		want      []string // substrings of the error; none means success
	}{
		{"ok", "model: m\nsizes: [1, 2]\n", nil},
		{"defaults kept", "sizes: [3]\n", nil},
		{"unknown key", "model: m\nmodl: x\n", []string{"p.modl (line 2)", "unknown key", "model"}},
		{"nested unknown", "model: m\ninner:\n  dept: 3\n", []string{"p.inner.dept (line 3)"}},
		{"bad type", "model: m\nsizes: nope\n", []string{"p.sizes (line 2): want an integer, got \"nope\""}},
		{"every problem at once", "modl: x\nsizes: [1, two, 3, four]\ninner:\n  depth: -1\n  dept: 2\n", []string{
			"p.modl (line 1): unknown key", "p.inner.dept (line 5): unknown key", `p.sizes (line 2): want an integer, got "two"`,
			`p.sizes (line 2): want an integer, got "four"`, "p.inner.depth (line 4): must not be negative"}},
		{"nested type error", "model: m\ninner:\n  depth: deep\n", []string{`p.inner.depth (line 3): want an integer, got "deep"`}},
		{"validation names line", "model: m\ninner:\n  depth: -1\n", []string{"p.inner.depth (line 3)", "negative"}},
		{"not a mapping", "- a\n", []string{"p (line 1): must be a mapping"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := &sample{Model: "default"}
			err := config.Decode(node(t, tt.doc), cfg, "p")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestDecodeEmptyParamsValidatesDefaults(t *testing.T) {
	t.Parallel()
	cfg := &sample{}
	err := config.Decode(nil, cfg, "engine.params")
	if err == nil || !strings.Contains(err.Error(), "engine.params.model: is required") {
		t.Fatalf("err = %v", err)
	}
}

func TestSetParam(t *testing.T) {
	t.Parallel()
	var n yaml.Node
	config.SetParam(&n, "model", "nvl72")
	config.SetParam(&n, "output", "/tmp/x")
	config.SetParam(&n, "model", "mixed")
	config.SetParamList(&n, "tags", []string{"a", "b"})
	cfg := &sample{}
	if err := config.Decode(&n, cfg, "p"); err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "mixed" || cfg.Output != "/tmp/x" || len(cfg.Tags) != 2 {
		t.Errorf("cfg = %+v", cfg)
	}
}

func TestParseFile(t *testing.T) {
	t.Parallel()
	f, err := config.Parse([]byte("provider:\n  name: sim\n  params:\n    model: nvl72\nengines:\n  - name: slurm\n    params:\n      plugin: topology/block\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Provider.Name != "sim" || len(f.Engines) != 1 || f.Engines[0].Params.Kind != yaml.MappingNode {
		t.Errorf("file = %+v", f)
	}
	_, err = config.Parse([]byte("provider:\n  name: sim\nengine:\n  - name: slurm\n"))
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "engine") {
		t.Errorf("unknown top-level key: %v", err)
	}
	_, err = config.Parse([]byte("engines:\n  - params: {}\n"))
	if err == nil || !strings.Contains(err.Error(), "engines[0].name") {
		t.Errorf("missing engine name: %v", err)
	}
}

type listed struct {
	Items []inner `yaml:"items"`
}

func (l *listed) Validate() error {
	for i, it := range l.Items {
		if it.Depth > 9 {
			return config.Errorf("items["+string(rune('0'+i))+"].depth", "too deep")
		}
	}
	return nil
}

func TestDecodeLists(t *testing.T) {
	t.Parallel()
	err := config.Decode(node(t, "items:\n  - depth: 1\n  - dpth: 2\n"), &listed{}, "p")
	if err == nil || !strings.Contains(err.Error(), "p.items[1].dpth (line 3): unknown key") {
		t.Errorf("unknown key in list: %v", err)
	}
	err = config.Decode(node(t, "items:\n  - depth: 1\n  - depth: 12\n"), &listed{}, "p")
	if err == nil || !strings.Contains(err.Error(), "p.items[1].depth (line 3): too deep") {
		t.Errorf("validation in list: %v", err)
	}
}

type commanded struct {
	Tags []string       `yaml:"tags"`
	Cmd  config.Command `yaml:"cmd"`
}

func (*commanded) Validate() error { return nil }

// A plain scalar given for a list is a list split at commas, as the
// command line gives one; a Command keeps its own string form, split at
// white space.
func TestDecodePlainScalarLists(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc        string
		tags, argv []string
	}{
		{"tags: a,b\n", []string{"a", "b"}, nil},
		{"tags: one\n", []string{"one"}, nil},
		{"cmd: scontrol reconfigure\n", nil, []string{"scontrol", "reconfigure"}},
		{"cmd: \"true\"\n", nil, []string{"true"}},
		{"cmd: [ssh, ib01, ibnetdiscover]\n", nil, []string{"ssh", "ib01", "ibnetdiscover"}},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			t.Parallel()
			var c commanded
			if err := config.Decode(node(t, tt.doc), &c, "p"); err != nil {
				t.Fatal(err)
			}
			if strings.Join(c.Tags, "|") != strings.Join(tt.tags, "|") || strings.Join(c.Cmd, "|") != strings.Join(tt.argv, "|") {
				t.Errorf("tags %q, cmd %q; want %q, %q", c.Tags, c.Cmd, tt.tags, tt.argv)
			}
		})
	}
}
