package app_test

import (
	"reflect"
	"testing"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/registry"
)

// TestConfigsValidateOnThePointer: every plugin's typed Config, the
// templates' too, is validated one way: Validate on *Config (the
// factories decode into a *Config and call it there), never on the value.
func TestConfigsValidateOnThePointer(t *testing.T) {
	t.Parallel()
	var choices []registry.Choice
	for _, f := range testedProviders() {
		choices = append(choices, registry.Choice{Name: "provider " + f.Name, Params: f.Params})
	}
	for _, f := range testedEngines() {
		choices = append(choices, registry.Choice{Name: "engine " + f.Name, Params: f.Params})
	}
	for _, c := range app.Registry().LedgerSourceChoices() {
		choices = append(choices, registry.Choice{Name: "ledger source " + c.Name, Params: c.Params})
	}
	validator := reflect.TypeFor[config.Validator]()
	for _, c := range choices {
		typ := reflect.TypeOf(c.Params.Defaults)
		switch {
		case typ == nil:
			t.Errorf("%s: Params has no Defaults (config.SpecOf of its Config)", c.Name)
		case typ.Kind() != reflect.Struct:
			t.Errorf("%s: Defaults is a %s, want the Config struct", c.Name, typ.Kind())
		case typ.Implements(validator):
			t.Errorf("%s: %s has Validate on the value; want func (c *%s) Validate() error", c.Name, typ, typ.Name())
		case !reflect.PointerTo(typ).Implements(validator):
			t.Errorf("%s: *%s has no Validate", c.Name, typ)
		}
	}
}
