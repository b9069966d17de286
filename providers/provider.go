// Package providers defines the contract of toposcope's topology sources.
// Each provider lives in a sub-package; internal/registry lists them all.
package providers

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/topology"
)

// ErrUnavailable is wrapped when a provider's source cannot be reached or
// answered with an error; the discovery may succeed if retried later.
var ErrUnavailable = errors.New("topology source unavailable")

// NodeRef names a node that a discovery should cover.
type NodeRef struct {
	// Name is the scheduler's node name.
	Name string `json:"name"`
	// InstanceID is the provider's ID for the machine, when known.
	InstanceID string `json:"instanceID,omitempty"`
	// Region is the cloud region of the machine, when known.
	Region string `json:"region,omitempty"`
}

// Request says which nodes a discovery covers. With no Nodes, the provider
// reports every node it can see.
type Request struct {
	Nodes []NodeRef `json:"nodes,omitempty"`
}

// Provider discovers the topology of a cluster.
type Provider interface {
	// Discover returns a graph covering the requested nodes. A requested
	// node the source knows nothing about is kept in the graph, unplaced.
	Discover(ctx context.Context, req Request) (*topology.Graph, error)
}

// Deps are what a provider may need from its host process.
type Deps struct {
	// Logger receives the provider's logs; never nil once defaulted.
	Logger *slog.Logger
	// Now returns the current time.
	Now func() time.Time
}

// WithDefaults fills unset dependencies.
func (d Deps) WithDefaults() Deps {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return d
}

// Factory describes one provider to the registry.
type Factory struct {
	// Name is the provider name used in configuration and on the CLI.
	Name string
	// Summary is a one-line description for `toposcope providers`.
	Summary string
	// New decodes params (a YAML mapping; may be empty) into the
	// provider's typed configuration, validates it, and builds the
	// provider. Field names in errors are prefixed with prefix.
	New func(params *yaml.Node, prefix string, deps Deps) (Provider, error)
	// Example is a parameter document that builds a working provider with
	// no outside service, used by the conformance test and the docs.
	Example string
}
