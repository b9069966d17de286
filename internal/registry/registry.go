// Package registry is the one way plugins of any kind are described and
// looked up: a Factory says how to build one plugin from its YAML
// parameters, and a Kind holds the factories of one kind (providers,
// engines or ledger sources), finds one by name and builds it, naming the
// configuration field at fault. It knows no plugin and no plugin
// contract: the kinds are instances of its types (providers.Factory is a
// Factory[providers.Provider, providers.Deps]), and package plugins puts
// the three kinds together.
package registry

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
)

// ErrUnknownPlugin is wrapped when a plugin name is not registered.
var ErrUnknownPlugin = errors.New("unknown plugin")

// ErrDuplicatePlugin is returned by NewKind when two plugins of a kind
// share a name, or one has none.
var ErrDuplicatePlugin = errors.New("duplicate plugin name")

// Factory describes one plugin to its registry: P is what it builds (a
// provider, an engine, a ledger source) and D what it is built with (the
// host process's logger, clock, output stream).
type Factory[P, D any] struct {
	// Name is the plugin's name in the configuration file, in requests
	// and on the command line.
	Name string
	// Summary is a one-line description for the plugin listings
	// (`toposcope providers`, `toposcope engines`).
	Summary string
	// New decodes params (a YAML mapping; nil or empty for none) into the
	// plugin's typed configuration, validates it, and builds the plugin.
	// Field names in its errors are prefixed with prefix.
	New func(params *yaml.Node, prefix string, deps D) (P, error)
	// Example is a parameter document that builds a working plugin with
	// no outside service, used by the conformance test and the docs;
	// empty only for a kind that allows it (a ledger source that always
	// needs a cluster).
	Example string
	// Params are the plugin's parameter keys, defaults and which of them
	// a REST request may set (config.SpecOf of its Config); a request
	// that sets any other key is refused.
	Params config.ParamSpec
	// WatchKeys are the Kubernetes Node label and annotation keys the
	// plugin reads (a key ending in "*" is a prefix), for a provider that
	// reads Nodes: the node watcher of `toposcope serve` watches the
	// union of the registered providers' keys unless
	// kubernetes.watchKeys says otherwise.
	WatchKeys []string
}

// Choice is one plugin a configuration may name: its name, summary and
// parameters, for listings and the configuration schema.
type Choice struct {
	Name, Summary string
	Params        config.ParamSpec
}

// Kind is the registered plugins of one kind, in listing order. Build
// one with NewKind; it is not changed afterwards.
type Kind[P, D any] struct {
	kind      string
	factories []Factory[P, D]
	defaults  func(D) D
}

// NewKind returns the plugins of kind (its word in messages: "provider",
// "engine", "ledger source") listed by factories, rejecting empty and
// duplicate names with ErrDuplicatePlugin. defaults, when not nil, fills
// the unset dependencies a plugin is built with.
func NewKind[P, D any](kind string, factories []Factory[P, D], defaults func(D) D) (*Kind[P, D], error) {
	seen := make(map[string]bool, len(factories))
	for _, f := range factories {
		if f.Name == "" {
			return nil, fmt.Errorf("%s with an empty name: %w", kind, ErrDuplicatePlugin)
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("%s %q: %w", kind, f.Name, ErrDuplicatePlugin)
		}
		seen[f.Name] = true
	}
	return &Kind[P, D]{kind: kind, factories: slices.Clone(factories), defaults: defaults}, nil
}

// All returns the factories in listing order.
func (k *Kind[P, D]) All() []Factory[P, D] { return k.factories }

// Choices returns the plugins as Choices, in listing order.
func (k *Kind[P, D]) Choices() []Choice {
	out := make([]Choice, 0, len(k.factories))
	for _, f := range k.factories {
		out = append(out, Choice{Name: f.Name, Summary: f.Summary, Params: f.Params})
	}
	return out
}

// Get returns the factory named name; the error lists the known names,
// suggests the closest one, and wraps ErrUnknownPlugin.
func (k *Kind[P, D]) Get(name string) (Factory[P, D], error) {
	return Find(k.kind, k.factories, name, func(f Factory[P, D]) string { return f.Name })
}

// New builds the plugin name from params (nil for none). field is where
// the plugin stands in the configuration or request, e.g. "provider" or
// "engines[1]": an unknown name is a *config.FieldError on field+".name"
// wrapping ErrUnknownPlugin, and the factory's field errors are
// prefixed with field+".params".
func (k *Kind[P, D]) New(name, field string, params *yaml.Node, deps D) (P, error) {
	f, err := k.Get(name)
	if err != nil {
		var zero P
		return zero, &config.FieldError{Field: field + ".name", Err: err}
	}
	if k.defaults != nil {
		deps = k.defaults(deps)
	}
	p, err := f.New(params, field+".params", deps)
	if err != nil {
		var zero P
		return zero, fmt.Errorf("%s %s: %w", k.kind, name, err)
	}
	return p, nil
}

// ForRequest builds the plugin name for a REST request: requested (the
// request's parameters; nil for none) may set only the keys that the
// plugin's Params let a request set, and is laid over configured (the
// operator's parameters for it; nil when none). A key the request may
// not set is a *config.FieldError wrapping config.ErrOperatorOnly, and
// nothing is built.
func (k *Kind[P, D]) ForRequest(name, field string, configured, requested *yaml.Node, deps D) (P, error) {
	f, err := k.Get(name)
	if err != nil {
		var zero P
		return zero, &config.FieldError{Field: field + ".name", Err: err}
	}
	if err := f.Params.CheckRequest(requested, field+".params"); err != nil {
		var zero P
		return zero, err
	}
	return k.New(name, field, config.Overlay(configured, requested), deps)
}

// Decoded is the body of a typed plugin's New: it decodes params over
// cfg (the plugin's defaults) strictly, validating through *C, builds
// the plugin with build, and puts the field errors of build where they
// stand: prefix in front of their fields, and the line of their key
// (config.Located).
func Decoded[C any, PC interface {
	*C
	config.Validator
}, B, D any](params *yaml.Node, prefix string, deps D, cfg C, build func(C, D) (B, error)) (B, error) {
	if err := config.Decode(params, PC(&cfg), prefix); err != nil {
		var zero B
		return zero, err
	}
	p, err := build(cfg, deps)
	if err != nil {
		var zero B
		return zero, config.Located(params, prefix, err)
	}
	return p, nil
}

// Find returns the element of fs whose name (nameOf) is name; the error
// names kind, lists the known names, suggests the closest one, and wraps
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
