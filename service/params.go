package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
)

// ParamsNode returns the parameters as a YAML node for the plugin's
// factory, or nil for none. The node is built from the decoded JSON
// value (not by reparsing the text), so every JSON string survives,
// control characters included.
func (p Plugin) ParamsNode() (*yaml.Node, error) {
	if len(p.Params) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(p.Params))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	return yamlNode(v), nil
}

// yamlNode converts a JSON value decoded with UseNumber into a YAML node.
func yamlNode(v any) *yaml.Node {
	switch v := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range sortedKeys(v) {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, yamlNode(v[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, item := range v {
			n.Content = append(n.Content, yamlNode(item))
		}
		return n
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(v), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(v)}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(v)}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
}

// pluginFromConfig turns a configured plugin into a request plugin with
// canonical JSON parameters, which go into the request ID only: the
// plugin is built from the configuration's own YAML node.
func pluginFromConfig(p config.Plugin) (Plugin, error) {
	out := Plugin{Name: p.Name}
	if p.Params.Kind == 0 {
		return out, nil
	}
	var v any
	if err := p.Params.Decode(&v); err != nil {
		return out, fmt.Errorf("configured %s params: %w", p.Name, err)
	}
	if v == nil {
		return out, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return out, fmt.Errorf("configured %s params: %w", p.Name, err)
	}
	if string(data) != "{}" {
		out.Params = data
	}
	return out, nil
}
