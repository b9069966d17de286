package app_test

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
)

// TestSchemaEnumsMatchValidate: every value that a plugin's schema lists
// in an enum is accepted by the plugin (no error on that key), and a
// value outside it is refused naming the key, so that the enum tags say
// what Validate does.
func TestSchemaEnumsMatchValidate(t *testing.T) {
	t.Parallel()
	r := app.Registry()
	type plugin struct {
		kind, example string
		choice        plugins.Choice
		build         func(p *yaml.Node) error
	}
	var all []plugin
	for i, f := range r.Providers() {
		all = append(all, plugin{"provider", f.Example, r.ProviderChoices()[i], func(p *yaml.Node) error {
			_, err := f.New(p, "params", providers.Deps{}.WithDefaults())
			return err
		}})
	}
	for i, f := range r.Engines() {
		all = append(all, plugin{"engine", f.Example, r.EngineChoices()[i], func(p *yaml.Node) error {
			_, err := f.New(p, "params", engines.Deps{}.WithDefaults())
			return err
		}})
	}
	checked := 0
	for _, pl := range all {
		props, _ := plugins.ParamsSchema(pl.choice.Params)["properties"].(config.Schema)
		for key, p := range props {
			enum, ok := p.(config.Schema)["enum"].([]any)
			if !ok {
				continue
			}
			for _, v := range append(slices.Clone(enum), "no-such-value") {
				t.Run(pl.kind+"/"+pl.choice.Name+"/"+key+"="+v.(string), func(t *testing.T) {
					t.Parallel()
					node := params(t, pl.example)
					config.SetParam(node, key, v.(string))
					err := pl.build(node)
					// A value the target cannot express (topology/yaml on
					// an older Slurm) is valid, not refused.
					refused := plugins.FieldOf(err) == "params."+key && !errors.Is(err, engines.ErrInexpressible)
					if want := v != "no-such-value"; refused == want {
						t.Errorf("%s %s: %s=%s: error %v; the schema's enum says it is %s", pl.kind, pl.choice.Name, key, v, err,
							map[bool]string{true: "valid", false: "invalid"}[want])
					}
				})
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no enum checked")
	}
}

// TestConfigSchemaFile keeps docs/config.schema.json (the schema editors
// read, named by the $schema line of examples/*.yaml) equal to what the
// registry generates (go test ./app/ -run ConfigSchemaFile -update).
func TestConfigSchemaFile(t *testing.T) {
	t.Parallel()
	want, err := config.MarshalSchema(app.Registry().ConfigSchema())
	if err != nil {
		t.Fatal(err)
	}
	const path = "../docs/config.schema.json"
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is not current (%v): run go test ./app/ -run ConfigSchemaFile -update", path, err)
	}
}
