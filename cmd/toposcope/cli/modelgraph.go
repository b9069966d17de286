package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// modelGraph is the whole graph of a simulation model (a bundled name or a
// model file), built by the registry's simulation provider as a discovery
// would build it. A model that cannot be loaded is a usage error.
func modelGraph(ctx context.Context, env *Env, model string) (*topology.Graph, error) {
	p := app.DefaultProvider()
	config.SetParam(&p.Params, "model", model)
	reg := env.Registry
	if reg == nil {
		reg = app.Registry()
	}
	prov, err := reg.NewProvider(p.Name, "provider", &p.Params, providers.Deps{})
	if err != nil {
		var fe *config.FieldError
		if errors.As(err, &fe) {
			err = fe.Err // the flag is the field here, not the provider's parameter
		}
		return nil, fmt.Errorf("%w: --model: %w", ErrUsage, err)
	}
	g, err := prov.Discover(ctx, providers.Request{})
	if err != nil {
		return nil, fmt.Errorf("--model %s: %w", model, err)
	}
	return g, nil
}
