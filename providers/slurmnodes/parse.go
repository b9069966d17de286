package slurmnodes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrParse is wrapped when the node listing cannot be read.
var ErrParse = errors.New("cannot read Slurm's node listing")

// Node is what the provider reads of one Slurm node.
type Node struct {
	Name       string
	Partitions []string
	Features   []string
	Comment    string
	Extra      string
	InstanceID string
}

// Parse reads `scontrol --json show nodes` (a JSON object with "nodes")
// or `scontrol -o show nodes` (one line of Key=Value fields per node).
// An error names the line or the node, never a field's value.
func Parse(out []byte) ([]Node, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the listing is empty", ErrParse)
	}
	if out[0] == '{' {
		return parseJSON(out)
	}
	return parseOneLiner(out)
}

// jsonNode is a node of scontrol's JSON (data_parser v0.0.39 and later).
type jsonNode struct {
	Name       string          `json:"name"`
	Partitions []string        `json:"partitions"`
	Features   json.RawMessage `json:"features"`
	Comment    string          `json:"comment"`
	Extra      string          `json:"extra"`
	InstanceID string          `json:"instance_id"`
}

func parseJSON(out []byte) ([]Node, error) {
	var doc struct {
		Nodes  *[]jsonNode `json:"nodes"`
		Errors []struct {
			Description string `json:"description"`
			Error       string `json:"error"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: JSON syntax error at byte %d", ErrParse, se.Offset)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%w: %s is a JSON %s, want %s", ErrParse, te.Field, te.Value, te.Type)
		}
		return nil, fmt.Errorf("%w: %w", ErrParse, err)
	}
	if len(doc.Errors) > 0 {
		return nil, fmt.Errorf("%w: scontrol reports %d errors, the first: %s", ErrParse, len(doc.Errors), doc.Errors[0].Error)
	}
	if doc.Nodes == nil {
		return nil, fmt.Errorf("%w: no \"nodes\" in the JSON", ErrParse)
	}
	nodes := make([]Node, 0, len(*doc.Nodes))
	for i, n := range *doc.Nodes {
		if n.Name == "" {
			return nil, fmt.Errorf("%w: nodes[%d] has no name", ErrParse, i)
		}
		features, err := jsonList(n.Features)
		if err != nil {
			return nil, fmt.Errorf("%w: node %s: features: %w", ErrParse, n.Name, err)
		}
		nodes = append(nodes, Node{Name: n.Name, Partitions: n.Partitions, Features: features,
			Comment: n.Comment, Extra: n.Extra, InstanceID: n.InstanceID})
	}
	return nodes, nil
}

// jsonList reads a list of strings, or one comma-separated string (older
// data parsers), or nothing.
func jsonList(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, errors.New("want a list of strings or a string")
	}
	return splitList(s), nil
}

// splitList splits a comma-separated Slurm list; "(null)" is empty.
func splitList(s string) []string {
	if s == "" || s == "(null)" {
		return nil
	}
	return strings.Split(s, ",")
}

// parseOneLiner reads `scontrol -o show nodes`: one node a line, fields
// "Key=Value" separated by spaces. A value may hold spaces (Comment,
// Reason, OS): a field runs until the next " Key=" with a known-looking key.
func parseOneLiner(out []byte) ([]Node, error) {
	var nodes []Node
	for i, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := oneLinerFields(line)
		name, ok := f["NodeName"]
		if !ok || name == "" {
			return nil, fmt.Errorf("%w: line %d does not start with NodeName=", ErrParse, i+1)
		}
		nodes = append(nodes, Node{Name: name, Partitions: splitList(f["Partitions"]), Features: splitList(f["AvailableFeatures"]),
			Comment: nullEmpty(f["Comment"]), Extra: nullEmpty(f["Extra"]), InstanceID: nullEmpty(f["InstanceId"])})
	}
	return nodes, nil
}

func nullEmpty(s string) string {
	if s == "(null)" {
		return ""
	}
	return s
}

// oneLinerFields splits a line into its Key=Value fields.
func oneLinerFields(line string) map[string]string {
	fields := map[string]string{}
	key, start := "", -1
	flush := func(end int) {
		if key != "" {
			fields[key] = strings.TrimSpace(line[start:end])
		}
	}
	for i := 0; i < len(line); {
		// A key starts the line or follows a space: letters, digits, '_'.
		if i == 0 || line[i-1] == ' ' {
			j := i
			for j < len(line) && isKeyByte(line[j]) {
				j++
			}
			if j > i && j < len(line) && line[j] == '=' && line[i] >= 'A' && line[i] <= 'Z' {
				flush(i)
				key, start = line[i:j], j+1
				i = j + 1
				continue
			}
		}
		i++
	}
	flush(len(line))
	return fields
}

func isKeyByte(b byte) bool {
	return b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}
