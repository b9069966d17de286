package registry_test

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/registry"
)

// greeter is a plugin of a kind made up for the test: it is built from
// a typed config and keeps the dependency it was given.
type greeter struct {
	cfg    greeterConfig
	prefix string
}

type greeterConfig struct {
	Name  string `yaml:"name" request:"true"`
	Shout bool   `yaml:"shout"`
}

func (c *greeterConfig) Validate() error {
	if c.Name == "" {
		return config.Join(config.Errorf("name", "is required"))
	}
	return nil
}

// deps are the greeter's dependencies; defaults sets an unset prefix.
type deps struct{ prefix string }

func defaults(d deps) deps {
	if d.prefix == "" {
		d.prefix = "hello"
	}
	return d
}

func factory(name string) registry.Factory[*greeter, deps] {
	return registry.Factory[*greeter, deps]{
		Name: name, Summary: "says hello", Example: "name: a", Params: config.SpecOf(greeterConfig{}),
		New: func(params *yaml.Node, prefix string, d deps) (*greeter, error) {
			var c greeterConfig
			if err := config.Decode(params, &c, prefix); err != nil {
				return nil, err
			}
			return &greeter{cfg: c, prefix: d.prefix}, nil
		},
	}
}

func node(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}

func fieldOf(err error) string {
	var fe *config.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

func TestNewKindRefusesBadNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		names []string
		want  string // in the error; empty: no error
	}{
		{"distinct", []string{"a", "b"}, ""},
		{"none", nil, ""},
		{"duplicate", []string{"a", "b", "a"}, `greeter "a"`},
		{"empty", []string{"a", ""}, "greeter with an empty name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var fs []registry.Factory[*greeter, deps]
			for _, n := range tt.names {
				fs = append(fs, factory(n))
			}
			k, err := registry.NewKind("greeter", fs, defaults)
			if tt.want == "" {
				if err != nil || len(k.All()) != len(tt.names) {
					t.Fatalf("NewKind = %v; want %d factories", err, len(tt.names))
				}
				return
			}
			if !errors.Is(err, registry.ErrDuplicatePlugin) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewKind = %v, want ErrDuplicatePlugin saying %q", err, tt.want)
			}
		})
	}
}

func TestKindBuilds(t *testing.T) {
	t.Parallel()
	k, err := registry.NewKind("greeter", []registry.Factory[*greeter, deps]{factory("formal"), factory("casual")}, defaults)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, plugin, params string
		deps                 deps
		wantField            string // of the error; empty: builds
		wantErr              string
		wantPrefix           string
	}{
		{"defaults filled", "casual", "name: x", deps{}, "", "", "hello"},
		{"deps kept", "formal", "name: x", deps{prefix: "good day"}, "", "", "good day"},
		{"unknown name with a hint", "formall", "name: x", deps{}, "engines[1].name", `greeter "formall" (known: formal, casual): unknown plugin; did you mean "formal"?`, ""},
		{"bad parameter under params", "formal", "shout: true", deps{}, "engines[1].params.name", "greeter formal: ", ""},
		{"unknown parameter", "formal", "name: x\nloud: 1", deps{}, "engines[1].params.loud", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := k.New(tt.plugin, "engines[1]", node(t, tt.params), tt.deps)
			if tt.wantField == "" {
				if err != nil || g.prefix != tt.wantPrefix || g.cfg.Name != "x" {
					t.Fatalf("New = %+v, %v; want prefix %q and name x", g, err, tt.wantPrefix)
				}
				return
			}
			if fieldOf(err) != tt.wantField || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New = %v (field %q), want field %q and %q", err, fieldOf(err), tt.wantField, tt.wantErr)
			}
		})
	}
}

func TestKindForRequest(t *testing.T) {
	t.Parallel()
	k, err := registry.NewKind("greeter", []registry.Factory[*greeter, deps]{factory("formal")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	operator := node(t, "name: op\nshout: true")
	g, err := k.ForRequest("formal", "engine", operator, node(t, "name: req"), deps{})
	if err != nil || g.cfg.Name != "req" || !g.cfg.Shout || g.prefix != "" {
		t.Errorf("ForRequest = %+v, %v; want the request's name over the operator's shout, no defaults", g, err)
	}
	_, err = k.ForRequest("formal", "engine", operator, node(t, "shout: false"), deps{})
	if !errors.Is(err, config.ErrOperatorOnly) || fieldOf(err) != "engine.params.shout" {
		t.Errorf("ForRequest(operator key) = %v, want config.ErrOperatorOnly on engine.params.shout", err)
	}
	if _, err := k.ForRequest("nope", "engine", nil, nil, deps{}); !errors.Is(err, registry.ErrUnknownPlugin) || fieldOf(err) != "engine.name" {
		t.Errorf("ForRequest(unknown) = %v, want ErrUnknownPlugin on engine.name", err)
	}
}

func TestChoices(t *testing.T) {
	t.Parallel()
	k, err := registry.NewKind("greeter", []registry.Factory[*greeter, deps]{factory("b"), factory("a")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := k.Choices()
	if len(c) != 2 || c[0].Name != "b" || c[1].Name != "a" || c[0].Summary != "says hello" || len(c[0].Params.RequestKeys) != 1 {
		t.Errorf("Choices = %+v; want b then a, in listing order, with summary and params", c)
	}
}
