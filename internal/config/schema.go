package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Schema is one JSON Schema (draft-07) object, as encoding/json writes it.
type Schema = map[string]any

// JSONSchemaDraft is the $schema of every document toposcope generates.
const JSONSchemaDraft = "http://json-schema.org/draft-07/schema#"

// Extension keywords of the generated schemas (validators ignore them).
const (
	// KeyRequest marks a parameter a REST request may set.
	KeyRequest = "x-toposcope-request"
	// KeyPath marks a parameter that names a file: "read" or "write".
	KeyPath = "x-toposcope-path"
	// KeyType names a type that decodes itself: "command" (a list of
	// arguments, or one string split at white space).
	KeyType = "x-toposcope-type"
)

// durationPattern is what time.ParseDuration accepts.
const durationPattern = `^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))+)$`

var (
	durationType = reflect.TypeFor[time.Duration]()
	yamlNodeType = reflect.TypeFor[yaml.Node]()
)

// FieldDoc returns the doc comment of field of the struct type t, as one
// paragraph, or "" when it has none. The comments are read from the
// source into fielddocs.go (app's TestFieldDocs -update).
func FieldDoc(t reflect.Type, field string) string {
	return fieldDocText(t.PkgPath() + "." + t.Name() + "." + field)
}

// SchemaOf returns the JSON Schema of a typed configuration: cfg is the
// struct (or a pointer to it) holding its defaults. Keys are the yaml
// tags (inline structs contribute their keys); types come from the Go
// types, "default" from the non-zero values of cfg, "enum" from an
// `enum:"a,b"` tag, "description" from the field's doc comment
// (FieldDoc), and the request and path tags become the KeyRequest and
// KeyPath keywords. Unknown keys are refused (additionalProperties:
// false), as Decode refuses them.
func SchemaOf(cfg any) Schema {
	v := reflect.ValueOf(cfg)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return walker{}.schema(v.Type().Elem(), reflect.Value{})
		}
		v = v.Elem()
	}
	return walker{}.schema(v.Type(), v)
}

// walker holds the struct types being walked, so that a recursive type
// (a tree of switches) ends in an open schema instead of recursing.
type walker map[reflect.Type]bool

// schema is the schema of type t; v, when valid, holds the
// defaults.
func (w walker) schema(t reflect.Type, v reflect.Value) Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
		if v.IsValid() {
			if v.IsNil() {
				v = reflect.Value{}
			} else {
				v = v.Elem()
			}
		}
	}
	switch {
	case t == yamlNodeType:
		return Schema{} // a plugin's own parameters, or any value
	case t == durationType:
		return Schema{"type": "string", "pattern": durationPattern}
	case reflect.PointerTo(t).Implements(unmarshalerType):
		if t == reflect.TypeFor[Command]() {
			return Schema{"type": []any{"array", "string"}, "items": Schema{"type": "string"}, KeyType: "command"}
		}
		return Schema{}
	}
	switch t.Kind() {
	case reflect.Struct:
		if w[t] {
			return Schema{"type": "object"} // recursive: checked by the decoder
		}
		w[t] = true
		defer delete(w, t)
		s := Schema{"type": "object", "additionalProperties": false}
		props := Schema{}
		w.structProps(t, v, false, props)
		s["properties"] = props
		return s
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return Schema{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Schema{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return Schema{"type": "number"}
	case reflect.Slice, reflect.Array:
		items := w.schema(t.Elem(), reflect.Value{})
		if k := t.Elem().Kind(); k == reflect.Struct || k == reflect.Slice || k == reflect.Map || k == reflect.Pointer {
			return Schema{"type": "array", "items": items}
		}
		// A list of scalars may also be one comma-separated string.
		return Schema{"type": []any{"array", "string"}, "items": items}
	case reflect.Map:
		return Schema{"type": "object", "additionalProperties": w.schema(t.Elem(), reflect.Value{})}
	}
	return Schema{}
}

// structProps adds the properties of the struct type t (defaults in v
// when valid) to props; all marks every key as one a request may set.
func (w walker) structProps(t reflect.Type, v reflect.Value, all bool, props Schema) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, inline, ok := yamlKey(f)
		if !ok {
			continue
		}
		var fv reflect.Value
		if v.IsValid() {
			fv = v.Field(i)
		}
		if inline {
			req := all || f.Tag.Get("request") == "true"
			ft, iv := f.Type, fv
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
				if iv.IsValid() && !iv.IsNil() {
					iv = iv.Elem()
				} else {
					iv = reflect.Value{}
				}
			}
			w.structProps(ft, iv, req, props)
			continue
		}
		s := w.schema(f.Type, fv)
		if enum := f.Tag.Get("enum"); enum != "" {
			vals := []any{}
			for e := range strings.SplitSeq(enum, ",") {
				vals = append(vals, e)
			}
			s["enum"] = vals
		}
		if d, ok := defaultOf(fv); ok {
			s["default"] = d
		}
		if doc := FieldDoc(t, f.Name); doc != "" {
			s["description"] = doc
		}
		if isRequestKey(f, all) {
			s[KeyRequest] = true
		}
		if mode := f.Tag.Get("path"); mode != "" {
			s[KeyPath] = mode
		}
		props[name] = s
	}
}

// defaultOf returns the JSON value of a default (v, a field of the
// defaults), and false when it is the zero value or not a scalar or a
// list of scalars.
func defaultOf(v reflect.Value) (any, bool) {
	if !v.IsValid() || v.IsZero() {
		return nil, false
	}
	if v.Type() == durationType {
		return time.Duration(v.Int()).String(), true
	}
	switch v.Kind() {
	case reflect.String:
		return v.String(), true
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint(), true
	case reflect.Float32, reflect.Float64:
		return v.Float(), true
	case reflect.Slice:
		out := make([]any, 0, v.Len())
		for i := range v.Len() {
			d, ok := defaultOf(v.Index(i))
			if !ok {
				return nil, false
			}
			out = append(out, d)
		}
		return out, true
	}
	return nil, false
}

// MarshalSchema writes a schema as indented JSON ending in a newline,
// keys sorted, without HTML escaping.
func MarshalSchema(s Schema) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return b.Bytes(), nil
}
