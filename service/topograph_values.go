package service

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Converters of Topograph parameter values into toposcope's (see
// topograph.go).

// labelSelector converts Topograph's nodeSelector (a label map) into a
// label selector; a string is taken as one.
func labelSelector(v any) (any, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case map[string]any:
		parts := make([]string, 0, len(v))
		for _, k := range sortedKeys(v) {
			s, ok := v[k].(string)
			if !ok {
				return nil, fmt.Errorf("label %q: value must be a string, got %s", k, jsonType(v[k]))
			}
			parts = append(parts, k+"="+s)
		}
		return strings.Join(parts, ","), nil
	}
	return nil, fmt.Errorf("must be a map of labels or a selector string, got %s", jsonType(v))
}

// acceleratorLabel reads the label key of Topograph's accelerator
// setting ({source: kubernetes-label, kubernetesLabel: {key}}).
func acceleratorLabel(v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok || m["source"] != "kubernetes-label" {
		return nil, fmt.Errorf("the dra provider reads domains from a node label: want source kubernetes-label")
	}
	if kl, ok := m["kubernetesLabel"].(map[string]any); ok {
		if key, ok := kl["key"].(string); ok && key != "" {
			return key, nil
		}
	}
	return "nvidia.com/gpu.clique", nil
}

// slurmTopologies converts Topograph's topologies (a map by name) into
// ours (a list); a list is taken as ours.
func slurmTopologies(v any) (any, error) {
	if list, ok := v.([]any); ok {
		return list, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be an object of named topologies, got %s", jsonType(v))
	}
	out := make([]any, 0, len(m))
	for _, name := range sortedKeys(m) {
		t, ok := m[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: must be an object", name)
		}
		ours := map[string]any{"name": name}
		for _, k := range sortedKeys(t) {
			switch k {
			case "plugin":
				ours["plugin"] = strings.TrimPrefix(fmt.Sprint(t[k]), "topology/")
			case "blockSizes", "clusterDefault", "blockName", "partition":
				ours[k] = t[k]
			case "nodes":
				nodes, ok := t[k].([]any)
				if !ok {
					return nil, fmt.Errorf("%s.nodes: must be a list of hostlists", name)
				}
				parts := make([]string, 0, len(nodes))
				for _, n := range nodes {
					parts = append(parts, fmt.Sprint(n))
				}
				ours["nodes"] = strings.Join(parts, ",")
			default:
				return nil, fmt.Errorf("%s.%s: not supported", name, k)
			}
		}
		out = append(out, ours)
	}
	return out, nil
}

// sameTopologies reports whether a request's topologies (Topograph's map
// by name, or our list) are the operator's list, in any order.
func sameTopologies(req, op any) bool {
	a, errA := canonicalTopologies(req)
	b, errB := canonicalTopologies(op)
	return errA == nil && errB == nil && a == b
}

// canonicalTopologies is the JSON of v's topologies in our form, sorted
// by name.
func canonicalTopologies(v any) (string, error) {
	list, err := slurmTopologies(v)
	if err != nil {
		return "", err
	}
	items, _ := list.([]any)
	byName := make(map[string]any, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return "", fmt.Errorf("a topology must be an object, got %s", jsonType(it))
		}
		byName[fmt.Sprint(m["name"])] = m
	}
	data, err := json.Marshal(byName) // maps are written in key order
	return string(data), err
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "number"
}

// takeTrimTiers moves Topograph's provider parameter trimTiers out of
// req's provider parameters: into req.TrimTiers where the provider takes
// it, nowhere where Topograph's provider ignores it.
func takeTrimTiers(req *GenerateRequest, rule trimRule) error {
	taken, err := takeParams(&req.Provider, "trimTiers")
	if err != nil {
		return err
	}
	raw, ok := taken["trimTiers"]
	if !ok {
		return nil
	}
	const field = "provider.params.trimTiers"
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil && string(raw) != "null" {
		return badRequest(field, "must be an integer, got %s", raw)
	}
	n := int(f)
	switch {
	case float64(n) != f:
		return badRequest(field, "must be an integer, got %s", raw)
	case rule == trimStrict && (n < 0 || n > 2):
		return badRequest(field, "must be an integer between 0 and 2 (the top tiers dropped: core, then spine), got %d", n)
	case rule == trimAny && n > maxTrimTiers:
		return badRequest(field, "must be at most %d, got %d", maxTrimTiers, n)
	}
	if rule != trimIgnored {
		req.TrimTiers = max(n, 0)
	}
	return nil
}

// takeParams removes keys from pl's parameters (canonical JSON again
// afterwards) and returns the values of those it had.
func takeParams(pl *Plugin, keys ...string) (map[string]json.RawMessage, error) {
	if len(pl.Params) == 0 {
		return nil, nil
	}
	params := map[string]json.RawMessage{}
	if err := json.Unmarshal(pl.Params, &params); err != nil {
		return nil, badRequest("provider.params", "must be an object")
	}
	taken := map[string]json.RawMessage{}
	for _, k := range keys {
		if v, ok := params[k]; ok {
			taken[k] = v
			delete(params, k)
		}
	}
	if len(taken) == 0 {
		return nil, nil
	}
	pl.Params = nil
	if len(params) > 0 {
		canon, err := json.Marshal(params) // sorted keys, compact
		if err != nil {
			return nil, badRequest("provider.params", "cannot be encoded: %w", err)
		}
		pl.Params = canon
	}
	return taken, nil
}

// maxTrimTiers bounds trimTiers where Topograph takes any integer: no
// fabric has more tiers.
const maxTrimTiers = 16
