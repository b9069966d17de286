package service

import (
	"testing"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/podsource"
	"github.com/toposcope/toposcope/placement/slurmsource"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/sim"
)

// internalRegistry is the part of the shipped plugin list that this
// package's internal tests use: the sim provider and the ledger sources.
// (The whole list, package app, imports service, so only the external
// tests can use it.)
func internalRegistry(t *testing.T) *plugins.Registry {
	t.Helper()
	r, err := plugins.New(plugins.Lists{
		Providers:     []providers.Factory{sim.NewFactory()},
		LedgerSources: []placement.SourceFactory{podsource.NewFactory(), slurmsource.NewFactory()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
