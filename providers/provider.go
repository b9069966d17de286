// Package providers defines the contract of toposcope's topology sources.
// Each provider lives in a sub-package; app lists them all.
package providers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/registry"
	"github.com/toposcope/toposcope/topology"
)

// Caps on what a provider reads from a file or a command: a source
// larger than this is refused (bounded.ErrTooLarge), not read into
// memory.
const (
	// MaxSourceBytes caps a file or command output that describes a
	// whole fabric (a model, ibnetdiscover output): 256 MiB.
	MaxSourceBytes = 256 << 20
	// MaxNodeOutputBytes caps one node's command output (nvidia-smi):
	// 4 MiB.
	MaxNodeOutputBytes = 4 << 20
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
	// Credentials are the caller's credentials for the provider's source,
	// if the request carried any. They are never marshalled or printed.
	Credentials Credentials `json:"-"`
}

// Credentials are provider credentials passed with a request (key to
// value, e.g. "accessKeyId"). They print, log and marshal as
// "[redacted]"; only Get reveals a value.
type Credentials struct {
	values map[string]string
}

// NewCredentials returns credentials holding a copy of values.
func NewCredentials(values map[string]string) Credentials {
	if len(values) == 0 {
		return Credentials{}
	}
	return Credentials{values: maps.Clone(values)}
}

// Get returns the value of key and whether it is set and not empty.
func (c Credentials) Get(key string) (string, bool) {
	v := c.values[key]
	return v, v != ""
}

// Len returns the number of credential keys.
func (c Credentials) Len() int { return len(c.values) }

// Keys returns the credential keys, sorted (keys are not secret).
func (c Credentials) Keys() []string { return slices.Sorted(maps.Keys(c.values)) }

// String implements fmt.Stringer without revealing anything.
func (c Credentials) String() string { return "[redacted]" }

// GoString implements fmt.GoStringer without revealing anything.
func (c Credentials) GoString() string { return "[redacted]" }

// Format implements fmt.Formatter: every verb prints "[redacted]".
func (c Credentials) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte("[redacted]")) }

// LogValue implements slog.LogValuer without revealing anything.
func (c Credentials) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// MarshalJSON writes "[redacted]".
func (c Credentials) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// MarshalText writes "[redacted]" (YAML and other text encoders).
func (c Credentials) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

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
	// Agents, when set, gives the node agents' reports the server keeps
	// (nil outside `toposcope serve`).
	Agents AgentReports
	// Observer records the provider's API calls and unplaced nodes for
	// metrics; a no-op once defaulted.
	Observer Observer
}

// WithDefaults fills unset dependencies.
func (d Deps) WithDefaults() Deps {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Observer == nil {
		d.Observer = nopObserver{}
	}
	return d
}

// Factory describes one provider to the registry (internal/registry
// has the meaning of each field). A provider that reads Kubernetes
// Nodes declares the label and annotation keys it reads in WatchKeys,
// from its own constants.
type Factory = registry.Factory[Provider, Deps]

// Decoded is the body of every factory's New: it decodes params over cfg
// (the plugin's defaults) strictly, builds the provider with build, and
// puts the field errors of build where they stand: prefix in front of
// their fields, and the line of their key (config.Located).
func Decoded[C any, PC interface {
	*C
	config.Validator
}, P Provider](params *yaml.Node, prefix string, deps Deps, cfg C, build func(C, Deps) (P, error)) (Provider, error) {
	p, err := registry.Decoded[C, PC](params, prefix, deps, cfg, build)
	if err != nil {
		return nil, err // not a nil *P in an interface
	}
	return p, nil
}

// NewFactory is the factory of a provider built from its typed Config:
// New decodes params over defaults strictly and builds through build
// (Decoded), and Params are read from the Config's tags.
func NewFactory[C any, PC interface {
	*C
	config.Validator
}, P Provider](name, summary, example string, defaults C, build func(C, Deps) (P, error)) Factory {
	return Factory{
		Name: name, Summary: summary, Example: example, Params: config.SpecOf(defaults),
		New: func(params *yaml.Node, prefix string, deps Deps) (Provider, error) {
			return Decoded[C, PC](params, prefix, deps, defaults, build)
		},
	}
}
