package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/internal/strictjson"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/topology"
)

// The body of POST /v1/generate and /v1/lookup (Topograph's request) is
// decoded here, into the typed service.GenerateRequest that the service
// runs; the mapping of Topograph's plugin names and parameters onto the
// operator's configuration is the service's (it needs that
// configuration).

// ParseGenerateRequest is the decoder of a POST /v1/generate and /v1/lookup
// body, on a byte slice: one JSON object of the documented shape, no
// unknown fields, every type checked, node groups merged by region and
// sorted. Errors are service.RequestErrors naming the field; they never
// quote credentials.
func ParseGenerateRequest(data []byte) (*service.GenerateRequest, error) {
	if err := checkJSON(data); err != nil {
		return nil, err
	}
	top, err := object(data, "", "provider", "engine", "nodes")
	if err != nil {
		return nil, err
	}
	req := &service.GenerateRequest{}
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

func plugin(m map[string]json.RawMessage, path string) (service.Plugin, error) {
	var p service.Plugin
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

func credentials(raw json.RawMessage) (service.Credentials, error) {
	if raw == nil || isNull(raw) {
		return service.Credentials{}, nil
	}
	if kind := jsonKind(raw); kind != "object" {
		return service.Credentials{}, badRequest("provider.creds", "must be an object, got %s", kind)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return service.Credentials{}, badRequest("provider.creds", "must be an object")
	}
	return service.NewCredentials(m), nil
}

func nodeGroups(raw json.RawMessage) ([]service.NodeGroup, error) {
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
	out := make([]service.NodeGroup, 0, len(byRegion))
	for _, region := range sortedKeys(byRegion) {
		out = append(out, service.NodeGroup{Region: region, Instances: byRegion[region]})
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

// badRequest is a RequestError about a field of a request body.
func badRequest(field, format string, args ...any) error {
	return &service.RequestError{Field: field, Err: fmt.Errorf(format, args...)}
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

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
