package sim

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// This file holds the small helpers that read typed values out of a
// yaml.Node tree, reporting each problem with its field path and line.

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 16; i++ {
		n = n.Alias
	}
	return n
}

// mapping calls fn for each key of the mapping n, in document order.
// fn returns false for a key it does not know, which is reported along
// with the known keys. Duplicate keys are reported and skipped.
func (d *decoder) mapping(n *yaml.Node, path, known string, fn func(key string, k, v *yaml.Node) bool) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.add(orDocument(path), n.Line, "must be a mapping, not %s", kindName(n))
		return
	}
	if !d.spend(len(n.Content)/2+1, n.Line) {
		return
	}
outer:
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		for j := 0; j < i; j += 2 {
			if n.Content[j].Value == k.Value {
				d.add(join(path, k.Value), k.Line, "duplicate key (first at line %d)", n.Content[j].Line)
				continue outer
			}
		}
		if !fn(k.Value, k, v) {
			d.add(join(path, k.Value), k.Line, "unknown key (known: %s)", known)
		}
	}
}

// sequence reports whether n is a sequence, reporting it when not.
func (d *decoder) sequence(n *yaml.Node, path string) bool {
	if n.Kind == yaml.SequenceNode {
		return d.spend(len(n.Content)+1, n.Line)
	}
	if isNull(n) {
		return false // an empty list
	}
	d.add(path, n.Line, "must be a list, not %s", kindName(n))
	return false
}

// str returns the scalar v, found at key of the mapping at path. A null
// is the empty string.
func (d *decoder) str(v *yaml.Node, path, key string) string {
	if v.Kind != yaml.ScalarNode {
		d.add(join(path, key), v.Line, "must be a string, not %s", kindName(v))
		return ""
	}
	if isNull(v) {
		return ""
	}
	return v.Value
}

// integer returns the integer v in [0, limit], or -1 after reporting a
// problem.
func (d *decoder) integer(v *yaml.Node, path, key string, limit int64) int {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" {
		d.add(join(path, key), v.Line, "must be an integer, not %s", kindName(v))
		return -1
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(v.Value, "_", ""), 0, 64)
	if err != nil || n < 0 || n > limit {
		d.add(join(path, key), v.Line, "must be an integer from 0 to %d, not %s", limit, v.Value)
		return -1
	}
	return int(n)
}

// hostlist returns the hostlist expression v: a string, or a list of
// strings that are joined with commas. keyLine is the line of the key.
func (d *decoder) hostlist(v *yaml.Node, path, key string, keyLine int) hostExpr {
	h := hostExpr{path: path, key: key, line: keyLine}
	switch {
	case v.Kind == yaml.ScalarNode && !isNull(v):
		h.expr = strings.TrimSpace(v.Value)
	case v.Kind == yaml.SequenceNode:
		if !d.spend(len(v.Content)+1, v.Line) {
			return h
		}
		parts := make([]string, 0, len(v.Content))
		for _, item := range v.Content {
			item = deref(item)
			if item.Kind != yaml.ScalarNode || isNull(item) {
				d.add(h.field(), item.Line, "must be a hostlist expression or a list of them, not a list holding %s", kindName(item))
				return h
			}
			parts = append(parts, strings.TrimSpace(item.Value))
		}
		h.expr = strings.Join(parts, ",")
	default:
		d.add(h.field(), v.Line, "must be a hostlist expression such as gpu[001-016], not %s", kindName(v))
		return h
	}
	if h.expr == "" {
		d.add(h.field(), v.Line, "must be a non-empty hostlist expression such as gpu[001-016]")
	}
	return h
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// kindName names the kind of n for error messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		return strconv.Quote(n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// join makes the field path of key under path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// index makes the field path of item i of the list at path.
func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

func orDocument(path string) string {
	if path == "" {
		return "(document)"
	}
	return path
}
