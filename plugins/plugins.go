// Package plugins is the Registry type: providers, engines and placement
// ledger sources looked up by name and built from their parameters. It
// knows the three plugin contracts and no plugin; app
// holds the one list of what toposcope ships, and whatever builds a
// plugin (the CLI, the service's discovery loop and its requests) is
// given a Registry and builds through it.
package plugins

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/registry"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/providers"
)

// ErrUnknownPlugin is wrapped when a provider, engine or ledger source
// name is not registered.
var ErrUnknownPlugin = registry.ErrUnknownPlugin

// ErrDuplicatePlugin is returned by New when two plugins of a kind share
// a name.
var ErrDuplicatePlugin = registry.ErrDuplicatePlugin

// Registry looks plugins up by name and builds them. Build one with New
// and pass it to whatever needs it; there is no global registry. Each
// kind is one registry.Kind: the methods below only name the kind.
type Registry struct {
	providers *registry.Kind[providers.Provider, providers.Deps]
	engines   *registry.Kind[engines.Engine, engines.Deps]
	sources   *registry.Kind[placement.Source, placement.SourceDeps]
}

// Lists are the factories a Registry holds, each in listing order.
type Lists struct {
	Providers     []providers.Factory
	Engines       []engines.Factory
	LedgerSources []placement.SourceFactory
}

// New returns a Registry of the given factories, rejecting empty and
// duplicate names.
func New(l Lists) (*Registry, error) {
	var r Registry
	var errs [3]error
	r.providers, errs[0] = registry.NewKind("provider", l.Providers, providers.Deps.WithDefaults)
	r.engines, errs[1] = registry.NewKind("engine", l.Engines, engines.Deps.WithDefaults)
	r.sources, errs[2] = registry.NewKind[placement.Source, placement.SourceDeps]("ledger source", l.LedgerSources, nil)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return &r, nil
}

// Providers returns the registered provider factories in listing order.
func (r *Registry) Providers() []providers.Factory { return r.providers.All() }

// Engines returns the registered engine factories in listing order.
func (r *Registry) Engines() []engines.Factory { return r.engines.All() }

// LedgerSources returns the registered ledger source factories in
// listing order.
func (r *Registry) LedgerSources() []placement.SourceFactory { return r.sources.All() }

// Provider returns the provider factory with the given name.
func (r *Registry) Provider(name string) (providers.Factory, error) { return r.providers.Get(name) }

// Engine returns the engine factory with the given name.
func (r *Registry) Engine(name string) (engines.Factory, error) { return r.engines.Get(name) }

// LedgerSource returns the ledger source factory with the given name.
func (r *Registry) LedgerSource(name string) (placement.SourceFactory, error) {
	return r.sources.Get(name)
}

// NewProvider builds the provider name from params (nil for none)
// through registry.Kind.New: field is where it stands in the
// configuration or request ("provider"), and names the field of an
// unknown name or of a bad parameter.
func (r *Registry) NewProvider(name, field string, params *yaml.Node, deps providers.Deps) (providers.Provider, error) {
	return r.providers.New(name, field, params, deps)
}

// NewEngine builds the engine name from params, like NewProvider.
func (r *Registry) NewEngine(name, field string, params *yaml.Node, deps engines.Deps) (engines.Engine, error) {
	return r.engines.New(name, field, params, deps)
}

// NewLedgerSource builds the ledger source name from params, like
// NewProvider.
func (r *Registry) NewLedgerSource(name, field string, params *yaml.Node, deps placement.SourceDeps) (placement.Source, error) {
	return r.sources.New(name, field, params, deps)
}

// Find returns the element of fs whose name (nameOf) is name; the error
// lists the known names, suggests the closest one, and wraps
// ErrUnknownPlugin (registry.Find).
func Find[F any](kind string, fs []F, name string, nameOf func(F) string) (F, error) {
	return registry.Find(kind, fs, name, nameOf)
}

// FieldOf returns the field of the first *config.FieldError in err's
// chain, or "".
func FieldOf(err error) string {
	var fe *config.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// ProviderForRequest builds the provider name for a REST request
// (registry.Kind.ForRequest): requested may set only the keys that the
// provider's Params let a request set, and is laid over configured (the
// operator's parameters for it; nil when none). A key the request may
// not set is a *config.FieldError wrapping config.ErrOperatorOnly, and
// nothing is built.
func (r *Registry) ProviderForRequest(name, field string, configured, requested *yaml.Node, deps providers.Deps) (providers.Provider, error) {
	return r.providers.ForRequest(name, field, configured, requested, deps)
}

// EngineForRequest builds the engine name for a REST request, like
// ProviderForRequest.
func (r *Registry) EngineForRequest(name, field string, configured, requested *yaml.Node, deps engines.Deps) (engines.Engine, error) {
	return r.engines.ForRequest(name, field, configured, requested, deps)
}

// CheckPaths keeps the files that the configured provider and engines
// name below the roots of cfg.Paths (symbolic links resolved), reporting
// each one outside them under its key. Unknown plugin names are left to
// NewProvider and NewEngine.
func (r *Registry) CheckPaths(cfg *config.File) error {
	var errs []error
	if f, err := r.Provider(cfg.Provider.Name); err == nil {
		errs = append(errs, cfg.Paths.Check(f.Params, &cfg.Provider.Params, "provider.params"))
	}
	for i := range cfg.Engines {
		if f, err := r.Engine(cfg.Engines[i].Name); err == nil {
			errs = append(errs, cfg.Paths.Check(f.Params, &cfg.Engines[i].Params, fmt.Sprintf("engines[%d].params", i)))
		}
	}
	return errors.Join(errs...)
}
