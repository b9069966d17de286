package app_test

import (
	"testing"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/engines"
	engineexample "github.com/toposcope/toposcope/engines/example"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/example"
)

// testedProviders are the shipped providers and the template a new one
// is copied from (providers/example, not shipped): the contract tests run
// them all, the request-keys document lists only the shipped ones.
func testedProviders() []providers.Factory {
	return append(app.Providers(), example.NewFactory())
}

// testedEngines are the shipped engines and the template a new one is
// copied from (engines/example, not shipped), as testedProviders.
func testedEngines() []engines.Factory {
	return append(app.Engines(), engineexample.NewFactory())
}

// testedRegistry is the shipped registry with the templates added.
func testedRegistry(t *testing.T) *plugins.Registry {
	t.Helper()
	r, err := plugins.New(plugins.Lists{Providers: testedProviders(), Engines: testedEngines(), LedgerSources: app.LedgerSources()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
