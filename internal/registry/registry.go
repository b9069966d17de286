// Package registry is the one place that lists every provider and engine
// toposcope ships. Nothing registers itself: to add a plugin, add its
// factory to Providers or Engines below.
package registry

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/k8slabels"
	"github.com/toposcope/toposcope/engines/schedtopo"
	"github.com/toposcope/toposcope/engines/slinky"
	"github.com/toposcope/toposcope/engines/slurm"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/podsource"
	"github.com/toposcope/toposcope/placement/slurmsource"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/aws"
	"github.com/toposcope/toposcope/providers/gcp"
	"github.com/toposcope/toposcope/providers/infiniband"
	pk8slabels "github.com/toposcope/toposcope/providers/k8slabels"
	"github.com/toposcope/toposcope/providers/lambda"
	"github.com/toposcope/toposcope/providers/merge"
	"github.com/toposcope/toposcope/providers/netq"
	"github.com/toposcope/toposcope/providers/nscale"
	"github.com/toposcope/toposcope/providers/nvlink"
	"github.com/toposcope/toposcope/providers/oci"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/providers/ufm"
)

// Providers returns the factory of every provider, in listing order. The
// merge provider builds its sources through this same list.
func Providers() []providers.Factory {
	var all []providers.Factory
	lookup := func(name string) (providers.Factory, error) {
		return find("provider", all, name, func(f providers.Factory) string { return f.Name })
	}
	all = []providers.Factory{
		sim.NewFactory(),
		infiniband.NewFactory(),
		ufm.NewFactory(),
		netq.NewFactory(),
		nvlink.NewFactory(),
		pk8slabels.NewFactory(),
		agents.NewFactory(),
		aws.NewFactory(),
		gcp.NewFactory(),
		oci.NewFactory(),
		lambda.NewFactory(),
		nscale.NewFactory(),
		merge.NewFactory(lookup),
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
	}
}

// LedgerSources returns the factory of every placement ledger source.
func LedgerSources() []placement.SourceFactory {
	return []placement.SourceFactory{podsource.NewFactory(), slurmsource.NewFactory()}
}

// LedgerSource returns the ledger source factory with the given name.
func LedgerSource(name string) (placement.SourceFactory, error) {
	return find("ledger source", LedgerSources(), name, func(f placement.SourceFactory) string { return f.Name })
}

// ErrUnknownPlugin is wrapped when a provider or engine name is not
// registered.
var ErrUnknownPlugin = errors.New("unknown plugin")

// ErrDuplicatePlugin is returned by New when two plugins share a name.
var ErrDuplicatePlugin = errors.New("duplicate plugin name")

// Registry looks plugins up by name. Build one with New and pass it to
// whatever needs it; there is no global registry.
type Registry struct {
	providers []providers.Factory
	engines   []engines.Factory
}

// New returns a Registry of the given factories (usually Providers() and
// Engines()), rejecting empty and duplicate names.
func New(p []providers.Factory, e []engines.Factory) (*Registry, error) {
	if err := unique("provider", p, func(f providers.Factory) string { return f.Name }); err != nil {
		return nil, err
	}
	if err := unique("engine", e, func(f engines.Factory) string { return f.Name }); err != nil {
		return nil, err
	}
	return &Registry{providers: slices.Clone(p), engines: slices.Clone(e)}, nil
}

// Default returns the Registry of everything toposcope ships.
func Default() *Registry {
	r, err := New(Providers(), Engines())
	if err != nil {
		panic(err) // the lists above are fixed; a test covers them
	}
	return r
}

func unique[F any](kind string, fs []F, name func(F) string) error {
	seen := make(map[string]bool, len(fs))
	for _, f := range fs {
		n := name(f)
		if n == "" {
			return fmt.Errorf("%s with an empty name: %w", kind, ErrDuplicatePlugin)
		}
		if seen[n] {
			return fmt.Errorf("%s %q: %w", kind, n, ErrDuplicatePlugin)
		}
		seen[n] = true
	}
	return nil
}

// Providers returns the registered provider factories in listing order.
func (r *Registry) Providers() []providers.Factory { return r.providers }

// Engines returns the registered engine factories in listing order.
func (r *Registry) Engines() []engines.Factory { return r.engines }

// Provider returns the provider factory with the given name.
func (r *Registry) Provider(name string) (providers.Factory, error) {
	return find("provider", r.providers, name, func(f providers.Factory) string { return f.Name })
}

// Engine returns the engine factory with the given name.
func (r *Registry) Engine(name string) (engines.Factory, error) {
	return find("engine", r.engines, name, func(f engines.Factory) string { return f.Name })
}

func find[F any](kind string, fs []F, name string, nameOf func(F) string) (F, error) {
	names := make([]string, 0, len(fs))
	for _, f := range fs {
		if nameOf(f) == name {
			return f, nil
		}
		names = append(names, nameOf(f))
	}
	var zero F
	return zero, fmt.Errorf("%s %q (known: %s): %w", kind, name, strings.Join(names, ", "), ErrUnknownPlugin)
}
