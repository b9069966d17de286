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
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/providers"
)

// ErrUnknownPlugin is wrapped when a provider, engine or ledger source
// name is not registered.
var ErrUnknownPlugin = errors.New("unknown plugin")

// ErrDuplicatePlugin is returned by New when two plugins of a kind share
// a name.
var ErrDuplicatePlugin = errors.New("duplicate plugin name")

// Registry looks plugins up by name and builds them. Build one with New
// and pass it to whatever needs it; there is no global registry.
type Registry struct {
	providers []providers.Factory
	engines   []engines.Factory
	sources   []placement.SourceFactory
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
	if err := unique("provider", l.Providers, func(f providers.Factory) string { return f.Name }); err != nil {
		return nil, err
	}
	if err := unique("engine", l.Engines, func(f engines.Factory) string { return f.Name }); err != nil {
		return nil, err
	}
	if err := unique("ledger source", l.LedgerSources, func(f placement.SourceFactory) string { return f.Name }); err != nil {
		return nil, err
	}
	return &Registry{
		providers: slices.Clone(l.Providers), engines: slices.Clone(l.Engines), sources: slices.Clone(l.LedgerSources),
	}, nil
}

// Providers returns the registered provider factories in listing order.
func (r *Registry) Providers() []providers.Factory { return r.providers }

// Engines returns the registered engine factories in listing order.
func (r *Registry) Engines() []engines.Factory { return r.engines }

// LedgerSources returns the registered ledger source factories in
// listing order.
func (r *Registry) LedgerSources() []placement.SourceFactory { return r.sources }

// Provider returns the provider factory with the given name.
func (r *Registry) Provider(name string) (providers.Factory, error) {
	return Find("provider", r.providers, name, func(f providers.Factory) string { return f.Name })
}

// Engine returns the engine factory with the given name.
func (r *Registry) Engine(name string) (engines.Factory, error) {
	return Find("engine", r.engines, name, func(f engines.Factory) string { return f.Name })
}

// LedgerSource returns the ledger source factory with the given name.
func (r *Registry) LedgerSource(name string) (placement.SourceFactory, error) {
	return Find("ledger source", r.sources, name, func(f placement.SourceFactory) string { return f.Name })
}

// NewProvider builds the provider name from params (nil for none). field
// is where the plugin stands in the configuration or request, e.g.
// "provider": an unknown name is a *config.FieldError on field+".name"
// wrapping ErrUnknownPlugin, and the factory's field errors are
// prefixed with field+".params".
func (r *Registry) NewProvider(name, field string, params *yaml.Node, deps providers.Deps) (providers.Provider, error) {
	f, err := r.Provider(name)
	if err != nil {
		return nil, &config.FieldError{Field: field + ".name", Err: err}
	}
	p, err := f.New(params, field+".params", deps.WithDefaults())
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", name, err)
	}
	return p, nil
}

// NewEngine builds the engine name from params, like NewProvider.
func (r *Registry) NewEngine(name, field string, params *yaml.Node, deps engines.Deps) (engines.Engine, error) {
	f, err := r.Engine(name)
	if err != nil {
		return nil, &config.FieldError{Field: field + ".name", Err: err}
	}
	e, err := f.New(params, field+".params", deps.WithDefaults())
	if err != nil {
		return nil, fmt.Errorf("engine %s: %w", name, err)
	}
	return e, nil
}

// NewLedgerSource builds the ledger source name from params, like
// NewProvider.
func (r *Registry) NewLedgerSource(name, field string, params *yaml.Node, deps placement.SourceDeps) (placement.Source, error) {
	f, err := r.LedgerSource(name)
	if err != nil {
		return nil, &config.FieldError{Field: field + ".name", Err: err}
	}
	s, err := f.New(params, field+".params", deps)
	if err != nil {
		return nil, fmt.Errorf("ledger source %s: %w", name, err)
	}
	return s, nil
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

// Find returns the factory of fs whose name (nameOf) is name; the error
// lists the known names, suggests the closest one, and wraps
// ErrUnknownPlugin.
func Find[F any](kind string, fs []F, name string, nameOf func(F) string) (F, error) {
	names := make([]string, 0, len(fs))
	for _, f := range fs {
		if nameOf(f) == name {
			return f, nil
		}
		names = append(names, nameOf(f))
	}
	var zero F
	hint := ""
	if s := config.Suggest(name, names); s != "" {
		hint = fmt.Sprintf("; did you mean %q?", s)
	}
	return zero, fmt.Errorf("%s %q (known: %s): %w%s", kind, name, strings.Join(names, ", "), ErrUnknownPlugin, hint)
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

// ProviderForRequest builds the provider name for a REST request:
// requested (the request's parameters; nil for none) may set only the
// keys that the provider's Params let a request set, and is laid over
// configured (the operator's parameters for it; nil when none). A key
// the request may not set is a *config.FieldError wrapping
// config.ErrOperatorOnly, and nothing is built.
func (r *Registry) ProviderForRequest(name, field string, configured, requested *yaml.Node, deps providers.Deps) (providers.Provider, error) {
	f, err := r.Provider(name)
	if err != nil {
		return nil, &config.FieldError{Field: field + ".name", Err: err}
	}
	if err := f.Params.CheckRequest(requested, field+".params"); err != nil {
		return nil, err
	}
	return r.NewProvider(name, field, config.Overlay(configured, requested), deps)
}

// EngineForRequest builds the engine name for a REST request, like
// ProviderForRequest.
func (r *Registry) EngineForRequest(name, field string, configured, requested *yaml.Node, deps engines.Deps) (engines.Engine, error) {
	f, err := r.Engine(name)
	if err != nil {
		return nil, &config.FieldError{Field: field + ".name", Err: err}
	}
	if err := f.Params.CheckRequest(requested, field+".params"); err != nil {
		return nil, err
	}
	return r.NewEngine(name, field, config.Overlay(configured, requested), deps)
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
