package providers

import (
	"errors"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
)

// Lookup returns the factory of a registered provider; providers that
// build others (merge, slurm-nodes) take one, normally the registry's.
type Lookup func(name string) (Factory, error)

// Build builds the provider name with params, as a provider nested in
// another's configuration: an unknown name is a FieldError on nameField,
// and errors in params are named under paramsField.
func (l Lookup) Build(name string, params *yaml.Node, nameField, paramsField string, deps Deps) (Provider, error) {
	if l == nil {
		return nil, errors.New("no provider lookup")
	}
	f, err := l(name)
	if err != nil {
		return nil, &config.FieldError{Field: nameField, Err: err}
	}
	return f.New(params, paramsField, deps)
}
