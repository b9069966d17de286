// Package strictjson checks what encoding/json lets through: it walks a
// JSON document beside the Go type it will be decoded into and refuses a
// key that repeats in one object, and a key that is not exactly (case
// included) a field of the struct it lands in. encoding/json matches
// keys case-insensitively and keeps the last of repeated keys, so
// {"NODE":..} and {"node":"a","node":"b"} would otherwise be accepted.
package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
)

// ErrKey is wrapped by the errors of Check.
var ErrKey = errors.New("bad JSON key")

// Error is a problem with one key; Field is its path in the document
// ("records[2].account").
type Error struct {
	// Field is the dotted path of the key.
	Field string
	// Msg says what is wrong.
	Msg string
}

// Error implements error.
func (e *Error) Error() string { return e.Field + ": " + e.Msg }

// Unwrap lets errors.Is match ErrKey.
func (e *Error) Unwrap() error { return ErrKey }

// maxDepth bounds the nesting walked; encoding/json refuses deeper
// documents itself (10000).
const maxDepth = 10000

// Check walks data (one JSON value) beside t, the type it is decoded
// into (a pointer is followed; nil checks repeated keys only). Inside a
// type with its own UnmarshalJSON, a map or an interface, only repeated
// keys are refused. Malformed JSON is not Check's to report: it stops
// and returns nil, and the decoder says what is wrong.
func Check(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := walker{dec: dec, fields: map[reflect.Type]map[string]reflect.Type{}}
	err := w.value(t, "", "", -1, 0)
	if errors.Is(err, errSyntax) {
		return nil
	}
	return err
}

// errSyntax stops the walk at malformed JSON.
var errSyntax = errors.New("syntax")

type walker struct {
	dec    *json.Decoder
	fields map[reflect.Type]map[string]reflect.Type
}

var (
	unmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// open returns the struct or container type to check inside t, or nil
// when only repeated keys can be checked.
func open(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Array, reflect.Map:
		if t.Kind() == reflect.Struct && (t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)) {
			return nil
		}
		return t
	}
	return nil
}

// join is the path of a value: element idx of parent, or, when idx is
// negative, its key (parent.key).
func join(parent, key string, idx int) string {
	switch {
	case idx >= 0:
		return parent + "[" + strconv.Itoa(idx) + "]"
	case parent == "":
		return key
	}
	return parent + "." + key
}

// value walks one value, at the path join(parent, key, idx): the path is
// only built for a container, so that a long array of scalars costs no
// string per element.
func (w *walker) value(t reflect.Type, parent, key string, idx, depth int) error {
	if depth > maxDepth {
		return errSyntax
	}
	tok, err := w.dec.Token()
	if err != nil {
		return errSyntax
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	path := join(parent, key, idx)
	t = open(t)
	switch d {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(elem, path, "", i, depth+1); err != nil {
				return err
			}
		}
	case '{':
		var fields map[string]reflect.Type
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = w.fieldsOf(t)
		} else if t != nil && t.Kind() == reflect.Map {
			elem = t.Elem()
		}
		seen := map[string]bool{}
		for w.dec.More() {
			kt, err := w.dec.Token()
			if err != nil {
				return errSyntax
			}
			k, _ := kt.(string)
			if seen[k] {
				return &Error{Field: join(path, k, -1), Msg: "appears twice in one object"}
			}
			seen[k] = true
			next := elem
			if fields != nil {
				ft, ok := fields[k]
				if !ok {
					return &Error{Field: join(path, k, -1), Msg: unknown(fields, k)}
				}
				next = ft
			}
			if err := w.value(next, path, k, -1, depth+1); err != nil {
				return err
			}
		}
	}
	if _, err := w.dec.Token(); err != nil { // the closing delimiter
		return errSyntax
	}
	return nil
}

// unknown says that k is not a field, naming the field it differs
// from in case only.
func unknown(fields map[string]reflect.Type, k string) string {
	for name := range fields {
		if strings.EqualFold(name, k) {
			return "unknown field (keys are case-sensitive: did you mean " + strconv.Quote(name) + "?)"
		}
	}
	return "unknown field"
}

// fieldsOf returns the JSON keys of struct t and their types, as
// encoding/json names them: the tag's name, else the Go field name;
// "-" skipped; untagged embedded structs' fields promoted.
func (w *walker) fieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := w.fields[t]; ok {
		return f
	}
	out := map[string]reflect.Type{}
	w.fields[t] = out
	collect(t, out, 0)
	return out
}

func collect(t reflect.Type, out map[string]reflect.Type, depth int) {
	if depth > 8 {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				collect(et, out, depth+1)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := out[name]; !dup || depth == 0 {
			out[name] = ft
		}
	}
}
