package service

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/internal/strictjson"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
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

// DecodeGenerateRequest strictly decodes a request body: one JSON object
// of the documented shape, no unknown fields, every type checked. Errors
// are RequestErrors naming the field; they never quote credentials.
func DecodeGenerateRequest(body io.Reader) (*GenerateRequest, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, &RequestError{Field: "(body)", Err: fmt.Errorf("read: %w", err)}
	}
	return ParseGenerateRequest(data)
}

// ParseGenerateRequest is DecodeGenerateRequest on a byte slice.
func ParseGenerateRequest(data []byte) (*GenerateRequest, error) {
	if err := checkJSON(data); err != nil {
		return nil, err
	}
	top, err := object(data, "", "provider", "engine", "nodes")
	if err != nil {
		return nil, err
	}
	req := &GenerateRequest{}
	if raw, ok := top["provider"]; ok && !isNull(raw) {
		p, err := object(raw, "provider", "name", "params", "creds")
		if err != nil {
			return nil, err
		}
		if req.Provider, err = plugin(p, "provider"); err != nil {
			return nil, err
		}
		if req.Creds, err = credentials(p["creds"]); err != nil {
			return nil, err
		}
	}
	if raw, ok := top["engine"]; ok && !isNull(raw) {
		e, err := object(raw, "engine", "name", "params")
		if err != nil {
			return nil, err
		}
		if req.Engine, err = plugin(e, "engine"); err != nil {
			return nil, err
		}
	}
	if req.Nodes, err = nodeGroups(top["nodes"]); err != nil {
		return nil, err
	}
	return req, nil
}

// checkJSON reports malformed JSON or trailing data by offset only: a
// syntax error message could quote part of a credential.
func checkJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return badRequest("(body)", "malformed JSON at byte offset %d", se.Offset)
		}
		if errors.Is(err, io.EOF) {
			return badRequest("(body)", "empty body: want a JSON object")
		}
		return badRequest("(body)", "malformed JSON (truncated)")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("(body)", "unexpected data after the JSON object at byte offset %d", dec.InputOffset())
	}
	var ke *strictjson.Error
	if err := strictjson.Check(data, nil); errors.As(err, &ke) { // repeated keys; the rest is checked key by key
		return badRequest(ke.Field, "%s", ke.Msg)
	}
	return nil
}

// object decodes raw as a JSON object whose keys must be among known.
func object(raw json.RawMessage, path string, known ...string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if kind := jsonKind(raw); kind != "object" {
		return nil, badRequest(orBody(path), "must be an object, got %s", kind)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, badRequest(orBody(path), "must be an object")
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(known, k) {
			return nil, badRequest(join(path, k), "unknown field (known: %s)", strings.Join(known, ", "))
		}
	}
	return m, nil
}

func plugin(m map[string]json.RawMessage, path string) (Plugin, error) {
	var p Plugin
	if raw, ok := m["name"]; ok {
		if err := str(raw, path+".name", &p.Name); err != nil {
			return p, err
		}
	}
	raw, ok := m["params"]
	if !ok || isNull(raw) {
		return p, nil
	}
	if kind := jsonKind(raw); kind != "object" {
		return p, badRequest(path+".params", "must be an object, got %s", kind)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return p, badRequest(path+".params", "must be an object")
	}
	canon, err := json.Marshal(v) // sorted keys, compact
	if err != nil {
		return p, badRequest(path+".params", "cannot be encoded: %w", err)
	}
	if string(canon) != "{}" {
		p.Params = canon
	}
	return p, nil
}

func credentials(raw json.RawMessage) (Credentials, error) {
	if raw == nil || isNull(raw) {
		return Credentials{}, nil
	}
	if kind := jsonKind(raw); kind != "object" {
		return Credentials{}, badRequest("provider.creds", "must be an object, got %s", kind)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return Credentials{}, badRequest("provider.creds", "must be an object")
	}
	return Credentials{values: m}, nil
}

func nodeGroups(raw json.RawMessage) ([]NodeGroup, error) {
	if raw == nil || isNull(raw) {
		return nil, nil
	}
	if kind := jsonKind(raw); kind != "array" {
		return nil, badRequest("nodes", "must be an array, got %s", kind)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, badRequest("nodes", "must be an array")
	}
	byRegion := map[string]map[string]string{}
	owner := map[string]string{} // node name -> field that placed it
	for i, item := range items {
		path := fmt.Sprintf("nodes[%d]", i)
		m, err := object(item, path, "region", "instances")
		if err != nil {
			return nil, err
		}
		var region string
		if r, ok := m["region"]; ok {
			if err := str(r, path+".region", &region); err != nil {
				return nil, err
			}
		}
		inst, ok := m["instances"]
		if !ok || isNull(inst) {
			continue
		}
		var im map[string]json.RawMessage
		if kind := jsonKind(inst); kind != "object" {
			return nil, badRequest(path+".instances", "must be an object, got %s", kind)
		}
		if err := json.Unmarshal(inst, &im); err != nil {
			return nil, badRequest(path+".instances", "must be an object")
		}
		if byRegion[region] == nil {
			byRegion[region] = map[string]string{}
		}
		if err := addInstances(byRegion[region], owner, im, path+".instances"); err != nil {
			return nil, err
		}
	}
	out := make([]NodeGroup, 0, len(byRegion))
	for _, region := range sortedKeys(byRegion) {
		out = append(out, NodeGroup{Region: region, Instances: byRegion[region]})
	}
	return out, nil
}

func addInstances(dst, owner map[string]string, im map[string]json.RawMessage, path string) error {
	for _, id := range sortedKeys(im) {
		field := path + "." + id
		if id == "" {
			return badRequest(path, "instance ID must not be empty")
		}
		var name string
		if err := str(im[id], field, &name); err != nil {
			return err
		}
		if err := topology.CheckNodeName(name); err != nil {
			return badRequest(field, "node name: %w", err)
		}
		if old, ok := dst[id]; ok && old != name {
			return badRequest(field, "instance listed twice with different node names")
		}
		if other, ok := owner[name]; ok && other != field {
			return badRequest(field, "node %q is also given by %s", name, other)
		}
		dst[id], owner[name] = name, field
	}
	return nil
}

func str(raw json.RawMessage, field string, dst *string) error {
	if kind := jsonKind(raw); kind != "string" {
		return badRequest(field, "must be a string, got %s", kind)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return badRequest(field, "must be a string")
	}
	return nil
}

// jsonKind names the JSON type of a valid value by its first byte.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func isNull(raw json.RawMessage) bool { return jsonKind(raw) == "null" }

func orBody(path string) string {
	if path == "" {
		return "(body)"
	}
	return path
}

func join(path, key string) string {
	if key == "" {
		key = `""`
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
