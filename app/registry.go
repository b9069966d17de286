// Package app is the composition root of toposcope: the one place that
// lists every provider, engine and placement ledger source it ships
// (Providers, Engines, LedgerSources), and the wiring of the service
// behind its HTTP front (Serve). Nothing registers itself: to add a
// plugin, add its factory to a list below. The Registry type that looks
// plugins up and builds them is package plugins; the commands in
// cmd/toposcope/cli parse flags and print, and reach plugins through here.
package app

import (
	"slices"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/instances"
	"github.com/toposcope/toposcope/engines/k8slabels"
	"github.com/toposcope/toposcope/engines/kueuebudgets"
	"github.com/toposcope/toposcope/engines/nfd"
	"github.com/toposcope/toposcope/engines/schedtopo"
	"github.com/toposcope/toposcope/engines/slinky"
	"github.com/toposcope/toposcope/engines/slurm"
	"github.com/toposcope/toposcope/engines/volcano"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/podsource"
	"github.com/toposcope/toposcope/placement/slurmsource"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/aws"
	"github.com/toposcope/toposcope/providers/dra"
	"github.com/toposcope/toposcope/providers/gcp"
	"github.com/toposcope/toposcope/providers/infiniband"
	pk8slabels "github.com/toposcope/toposcope/providers/k8slabels"
	"github.com/toposcope/toposcope/providers/lambda"
	"github.com/toposcope/toposcope/providers/lldp"
	"github.com/toposcope/toposcope/providers/merge"
	"github.com/toposcope/toposcope/providers/nebius"
	"github.com/toposcope/toposcope/providers/netq"
	"github.com/toposcope/toposcope/providers/nscale"
	"github.com/toposcope/toposcope/providers/nvlink"
	"github.com/toposcope/toposcope/providers/oci"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/providers/slurmnodes"
	"github.com/toposcope/toposcope/providers/ufm"
)

// Providers returns the factory of every provider, in listing order. The
// merge and slurm-nodes providers build theirs through this same list.
func Providers() []providers.Factory {
	var all []providers.Factory
	lookup := func(name string) (providers.Factory, error) {
		return plugins.Find("provider", all, name, func(f providers.Factory) string { return f.Name })
	}
	all = []providers.Factory{
		sim.NewFactory(),
		infiniband.NewFactory(),
		ufm.NewFactory(),
		netq.NewFactory(),
		nvlink.NewFactory(),
		pk8slabels.NewFactory(),
		dra.NewFactory(),
		agents.NewFactory(),
		lldp.NewFactory(),
		aws.NewFactory(),
		gcp.NewFactory(),
		oci.NewFactory(),
		lambda.NewFactory(),
		nscale.NewFactory(),
		nebius.NewFactory(),
		merge.NewFactory(lookup),
		slurmnodes.NewFactory(lookup),
	}
	return all
}

// Engines returns the factory of every engine, in listing order.
func Engines() []engines.Factory {
	return []engines.Factory{
		slurm.NewFactory(),
		k8slabels.NewFactory(),
		slinky.NewFactory(),
		schedtopo.NewKueueFactory(),
		schedtopo.NewKAIFactory(),
		kueuebudgets.NewFactory(),
		nfd.NewFactory(),
		volcano.NewFactory(),
		instances.NewFactory(),
	}
}

// LedgerSources returns the factory of every placement ledger source.
func LedgerSources() []placement.SourceFactory {
	return []placement.SourceFactory{podsource.NewFactory(), slurmsource.NewFactory()}
}

// Registry returns the Registry of everything toposcope ships.
func Registry() *plugins.Registry {
	r, err := plugins.New(plugins.Lists{Providers: Providers(), Engines: Engines(), LedgerSources: LedgerSources()})
	if err != nil {
		panic(err) // the lists above are fixed; the conformance test covers them
	}
	return r
}

// WatchKeys are the Node label and annotation keys that the providers of
// r declare they read (their factories' WatchKeys), each once, sorted: the
// node watcher of `toposcope serve` watches them when
// kubernetes.watchKeys is unset.
func WatchKeys(r *plugins.Registry) []string {
	var out []string
	for _, f := range r.Providers() {
		out = append(out, f.WatchKeys...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
