package service

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/providers"
)

// Plugin is a provider or engine named in an API request, with its
// parameters in canonical JSON (sorted keys; empty for none).
type Plugin struct {
	Name   string          `json:"name"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Credentials are the provider credentials of a request. They are used
// and dropped: they never appear in the request ID, the store, a log or an
// error, and they print and marshal as "[redacted]".
type Credentials struct {
	values map[string]json.RawMessage
}

// Len returns the number of credential keys.
func (c Credentials) Len() int { return len(c.values) }

// String implements fmt.Stringer without revealing anything.
func (c Credentials) String() string { return "[redacted]" }

// GoString implements fmt.GoStringer without revealing anything.
func (c Credentials) GoString() string { return "[redacted]" }

// LogValue implements slog.LogValuer without revealing anything.
func (c Credentials) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// MarshalJSON writes "[redacted]".
func (c Credentials) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// NodeGroup is Topograph's node list entry: the instances of one region,
// instance ID to node name.
type NodeGroup struct {
	Region    string            `json:"region"`
	Instances map[string]string `json:"instances"`
}

// GenerateRequest is the body of POST /v1/generate, decoded and
// canonicalized (node groups merged by region and sorted).
type GenerateRequest struct {
	Provider Plugin      `json:"provider"`
	Engine   Plugin      `json:"engine"`
	Nodes    []NodeGroup `json:"nodes,omitempty"`
	// TrimTiers is how many of the outermost switch tiers each node's
	// path loses before the engine sees the graph (Topograph's provider
	// parameter trimTiers, set only from it).
	TrimTiers int `json:"trimTiers,omitempty"`
	// Simulate is the answer Topograph's test provider was asked to give
	// (set only from it); nil for a request that runs normally.
	Simulate *Simulation `json:"simulate,omitempty"`
	// Creds are the provider credentials; never marshalled.
	Creds Credentials `json:"-"`
}

// Canonical returns the request's canonical JSON, without credentials.
func (r *GenerateRequest) Canonical() []byte {
	data, err := json.Marshal(r)
	if err != nil {
		panic(err) // plain strings, maps and canonical RawMessages always marshal
	}
	return data
}

// ID returns the request ID: the first 128 bits of the SHA-256 of the
// canonical request, in hex. Credentials are not part of it.
func (r *GenerateRequest) ID() string {
	sum := sha256.Sum256(r.Canonical())
	return hex.EncodeToString(sum[:16])
}

// DiscoveryRequest returns the nodes to discover, in natural order.
func (r *GenerateRequest) DiscoveryRequest() providers.Request {
	var refs []providers.NodeRef
	for _, g := range r.Nodes {
		for id, name := range g.Instances {
			refs = append(refs, providers.NodeRef{Name: name, InstanceID: id, Region: g.Region})
		}
	}
	slices.SortFunc(refs, func(a, b providers.NodeRef) int { return strings.Compare(a.Name, b.Name) })
	return providers.Request{Nodes: refs, Credentials: r.Creds.providerCredentials()}
}

// providerCredentials converts the credentials for the provider: a JSON
// string becomes its value, anything else its compact JSON text.
func (c Credentials) providerCredentials() providers.Credentials {
	if len(c.values) == 0 {
		return providers.Credentials{}
	}
	out := make(map[string]string, len(c.values))
	for k, raw := range c.values {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			out[k] = s
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			out[k] = string(raw)
			continue
		}
		out[k] = buf.String()
	}
	return providers.NewCredentials(out)
}

// NewCredentials wraps the credentials of a decoded request body, key to
// raw JSON value.
func NewCredentials(values map[string]json.RawMessage) Credentials {
	return Credentials{values: values}
}

// RestoreGenerateRequest decodes a stored request: the canonical JSON that
// Canonical wrote (credentials are never stored). Request bodies from
// clients are decoded by the server; this reads back only what the service
// itself wrote, with unknown fields refused.
func RestoreGenerateRequest(canonical []byte) (*GenerateRequest, error) {
	dec := json.NewDecoder(bytes.NewReader(canonical))
	dec.DisallowUnknownFields()
	req := &GenerateRequest{}
	if err := dec.Decode(req); err != nil {
		return nil, fmt.Errorf("stored request: %w: %w", err, ErrInternal)
	}
	return req, nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
