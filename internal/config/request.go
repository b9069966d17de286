package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrOperatorOnly is wrapped when a REST request sets a parameter that
// only the operator's configuration may set: a command, a path read or
// written, a URL or endpoint, a credentials file, a mode that writes.
var ErrOperatorOnly = errors.New("only the operator's configuration may set this key; a request may not")

// ParamSpec says which keys a plugin's parameters have and which of them
// a REST request may set. It is read from the plugin's typed
// configuration (SpecOf): a field tagged `request:"true"` is data a
// request may choose (node lists, rendering options); every other key is
// the operator's.
type ParamSpec struct {
	// Keys are every top-level key, sorted.
	Keys []string
	// RequestKeys are the keys a request may set, sorted.
	RequestKeys []string
	// Paths maps the keys that name a file to how it is used: "read" or
	// "write" (from the `path` tag); Paths.Check keeps them below the
	// operator's roots. A key inside a nested struct is dotted
	// ("snmp.communityFile").
	Paths map[string]string
	// Check, when set, vets the value of a request key that is allowed
	// only for some values (the sim provider's model: a bundled name, not
	// a path). It returns an error wrapping ErrOperatorOnly to refuse.
	Check func(key string, value *yaml.Node) error
	// Defaults is the typed configuration holding the plugin's defaults
	// (the value SpecOf read), from which SchemaOf writes its schema.
	Defaults any
}

// SpecOf reads the ParamSpec of a configuration struct (or a pointer to
// one, holding the defaults) from its yaml and request tags. An inline struct contributes its
// own keys: all of them request keys when the inline field is tagged
// `request:"true"`, else as its own fields are tagged.
func SpecOf(cfg any) ParamSpec {
	t := reflect.TypeOf(cfg)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := ParamSpec{Defaults: reflect.Indirect(reflect.ValueOf(cfg)).Interface()}
	specFields(t, false, &s)
	slices.Sort(s.Keys)
	slices.Sort(s.RequestKeys)
	return s
}

func specFields(t reflect.Type, all bool, s *ParamSpec) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, inline, ok := yamlKey(f)
		if !ok {
			continue
		}
		if inline {
			specFields(f.Type, all || f.Tag.Get("request") == "true", s)
			continue
		}
		req := isRequestKey(f, all)
		s.Keys = append(s.Keys, name)
		pathFields(f, name, s)
		if req {
			s.RequestKeys = append(s.RequestKeys, name)
		}
	}
}

// pathFields records in s.Paths the file that field f (key name) names,
// and those of the fields of a struct it holds, under dotted keys.
func pathFields(f reflect.StructField, name string, s *ParamSpec) {
	if mode := f.Tag.Get("path"); mode != "" {
		if s.Paths == nil {
			s.Paths = map[string]string{}
		}
		s.Paths[name] = mode
	}
	t := f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// Only the project's own settings structs hold keys (a yaml.Node,
	// say, points to itself); depth bounds any other cycle.
	if t.Kind() != reflect.Struct || !strings.HasPrefix(t.PkgPath(), "github.com/toposcope/toposcope/") || strings.Count(name, ".") > 4 {
		return
	}
	for i := range t.NumField() {
		sub := t.Field(i)
		key, inline, ok := yamlKey(sub)
		switch {
		case !ok:
		case inline:
			pathFields(sub, name, s)
		default:
			pathFields(sub, name+"."+key, s)
		}
	}
}

// isRequestKey reports whether the key of field f may be set by a REST
// request: tagged request:"true", or under an inline struct so tagged
// (all); never a command (type Command), whatever its tags say. A key
// with a path tag may be one (a sim model under paths.read): Paths.Check
// keeps what it names below the operator's roots.
func isRequestKey(f reflect.StructField, all bool) bool {
	if f.Type == reflect.TypeFor[Command]() {
		return false
	}
	return all || f.Tag.Get("request") == "true"
}

// Allows reports whether a request may set key.
func (s ParamSpec) Allows(key string) bool {
	_, ok := slices.BinarySearch(s.RequestKeys, key)
	return ok
}

// CheckRequest refuses every top-level key of params (a mapping from a
// REST request; nil for none) that a request may not set, naming each
// under prefix. An unknown key is left to Decode.
func (s ParamSpec) CheckRequest(params *yaml.Node, prefix string) error {
	if params == nil || params.Kind != yaml.MappingNode {
		return nil
	}
	var errs []error
	for i := 0; i+1 < len(params.Content); i += 2 {
		key := params.Content[i].Value
		_, known := slices.BinarySearch(s.Keys, key)
		switch {
		case !known:
		case !s.Allows(key):
			errs = append(errs, &FieldError{Field: join(prefix, key), Err: ErrOperatorOnly})
		case s.Check != nil:
			if err := s.Check(key, params.Content[i+1]); err != nil {
				errs = append(errs, &FieldError{Field: join(prefix, key), Err: err})
			}
		}
	}
	return errors.Join(errs...)
}

// Overlay returns the mapping base with the keys of over put over it (a
// key of over replaces the same key of base); either may be nil. Neither
// is changed. The result is a copy that carries no lines: it is a REST
// request's parameters, read from one-line JSON and the operator's file,
// so a line would point the client into a file it never sent; errors
// about it name the key alone.
func Overlay(base, over *yaml.Node) *yaml.Node {
	if base != nil && base.Kind == yaml.DocumentNode && len(base.Content) == 1 {
		base = base.Content[0]
	}
	switch {
	case over == nil || over.Kind != yaml.MappingNode || len(over.Content) == 0:
		return unlined(base)
	case base == nil || base.Kind != yaml.MappingNode:
		return unlined(over)
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	replaced := map[string]bool{}
	for i := 0; i+1 < len(over.Content); i += 2 {
		replaced[over.Content[i].Value] = true
	}
	for i := 0; i+1 < len(base.Content); i += 2 {
		if !replaced[base.Content[i].Value] {
			out.Content = append(out.Content, unlined(base.Content[i]), unlined(base.Content[i+1]))
		}
	}
	for _, n := range over.Content {
		out.Content = append(out.Content, unlined(n))
	}
	return out
}

// unlined returns a deep copy of n without lines and columns (an alias
// still points to its anchor); nil stays nil.
func unlined(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Line, c.Column = 0, 0
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, sub := range n.Content {
			c.Content[i] = unlined(sub)
		}
	}
	return &c
}
