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

	"github.com/go-json-experiment/json/jsontext"
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

// MaxDepth is the deepest nesting Check lets through: an object or
// array inside MaxDepth others is refused. No document the service
// reads nests more than a few tens deep; encoding/json alone would walk
// 10000 levels.
const MaxDepth = 256

// Error.Field of a document nested deeper than MaxDepth names only the
// start of the path: at most pathStart segments, each key cut to
// keyStart bytes.
const (
	pathStart = 8
	keyStart  = 64
)

// Check walks data (one JSON value) beside t, the type it is decoded
// into (a pointer is followed; nil checks repeated keys only). Inside a
// type with its own UnmarshalJSON, a map or an interface, only repeated
// keys are refused. A document nested deeper than MaxDepth is an Error
// naming the start of the path. Malformed JSON is not Check's to report:
// it stops and returns nil, and the decoder says what is wrong. Its
// memory is linear in the size of data: the path of a value is kept as
// a stack of its keys and built only for an error.
func Check(data []byte, t reflect.Type) error {
	// jsontext reads a string token without making a Go string of it,
	// so a long array of names costs nothing per element; it takes
	// repeated names and invalid UTF-8 as encoding/json does, for this
	// walk to refuse or the decoder to say.
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	w := walker{dec: dec, fields: map[reflect.Type]map[string]reflect.Type{}}
	err := w.value(t)
	if errors.Is(err, errSyntax) {
		return nil
	}
	return err
}

// errSyntax stops the walk at malformed JSON.
var errSyntax = errors.New("syntax")

// segment is one step of a path: an object's key, or, when idx is not
// negative, an array's element.
type segment struct {
	key string
	idx int
}

type walker struct {
	dec    *jsontext.Decoder
	fields map[reflect.Type]map[string]reflect.Type
	// path holds the steps to the value being walked.
	path []segment
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

// pathOf writes segs as a path ("records[2].account"), keys cut to
// keyLen bytes when keyLen is positive.
func pathOf(segs []segment, keyLen int) string {
	var b strings.Builder
	for _, s := range segs {
		switch {
		case s.idx >= 0:
			b.WriteString("[" + strconv.Itoa(s.idx) + "]")
			continue
		case b.Len() > 0:
			b.WriteByte('.')
		}
		k := s.key
		if keyLen > 0 && len(k) > keyLen {
			k = k[:keyLen] + "..."
		}
		b.WriteString(k)
	}
	return b.String()
}

// errorAt is an Error at the current path with key appended.
func (w *walker) errorAt(key, msg string) *Error {
	return &Error{Field: pathOf(append(w.path[:len(w.path):len(w.path)], segment{key: key, idx: -1}), 0), Msg: msg}
}

// tooDeep is the Error of a value nested deeper than MaxDepth: its
// Field is the start of the path.
func (w *walker) tooDeep() *Error {
	field := pathOf(w.path[:min(len(w.path), pathStart)], keyStart)
	if len(w.path) > pathStart {
		field += "..."
	}
	if field == "" {
		field = "body"
	}
	return &Error{Field: field, Msg: "nested more than " + strconv.Itoa(MaxDepth) + " levels deep"}
}

// value walks one value at w.path.
func (w *walker) value(t reflect.Type) error {
	tok, err := w.dec.ReadToken()
	if err != nil {
		return errSyntax
	}
	d := tok.Kind()
	if d != '[' && d != '{' {
		return nil
	}
	if len(w.path) >= MaxDepth {
		return w.tooDeep()
	}
	t = open(t)
	switch d {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; w.more(']'); i++ {
			w.path = append(w.path, segment{idx: i})
			err := w.value(elem)
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return err
			}
		}
	case '{':
		if err := w.object(t); err != nil {
			return err
		}
	}
	if _, err := w.dec.ReadToken(); err != nil { // the closing delimiter
		return errSyntax
	}
	return nil
}

// more reports whether a value (or a member) comes before the closing
// delimiter end; false at the end and at malformed input, where reading
// the delimiter then fails.
func (w *walker) more(end jsontext.Kind) bool {
	k := w.dec.PeekKind()
	return k != end && k != 0
}

// object walks the members of an object whose '{' was read, decoded
// into t (nil: only repeated keys are refused).
func (w *walker) object(t reflect.Type) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	if t != nil && t.Kind() == reflect.Struct {
		fields = w.fieldsOf(t)
	} else if t != nil && t.Kind() == reflect.Map {
		elem = t.Elem()
	}
	seen := map[string]bool{}
	for w.more('}') {
		kt, err := w.dec.ReadToken()
		if err != nil {
			return errSyntax
		}
		k := kt.String()
		if seen[k] {
			return w.errorAt(k, "appears twice in one object")
		}
		seen[k] = true
		next := elem
		if fields != nil {
			ft, ok := fields[k]
			if !ok {
				return w.errorAt(k, unknown(fields, k))
			}
			next = ft
		}
		w.path = append(w.path, segment{key: k, idx: -1})
		err = w.value(next)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return err
		}
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
