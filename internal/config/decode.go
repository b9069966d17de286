// Package config decodes toposcope's YAML configuration: the file shared by
// the CLI and the service, and each plugin's typed parameters. Every error
// names the key (and, where the YAML gives one, the line) it is about.
package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrInvalid is wrapped by every configuration error.
var ErrInvalid = errors.New("invalid configuration")

// FieldError is a problem with one configuration key.
type FieldError struct {
	// Field is the dotted path of the key, e.g. "engines[0].params.plugin".
	Field string
	// Line is the 1-based line of the key in its file; 0 when unknown.
	Line int
	// Err says what is wrong.
	Err error
}

// Error implements error.
func (e *FieldError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s (line %d): %v", e.Field, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Field, e.Err)
}

// Is makes errors.Is(err, ErrInvalid) true for every FieldError.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// Errorf returns a FieldError for field with a formatted message.
func Errorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// PrefixFields puts prefix and a dot in front of the field of every
// FieldError joined in err (a nested section's Validate result); other
// errors are kept as they are. A nil err stays nil.
func PrefixFields(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var out []error
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	for _, e := range list {
		var fe *FieldError
		if errors.As(e, &fe) {
			c := *fe
			c.Field = prefix + "." + c.Field
			out = append(out, &c)
			continue
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// Validator is implemented by every typed plugin configuration.
type Validator interface {
	// Validate reports every invalid field, as FieldErrors joined with
	// errors.Join. Field names are the YAML keys.
	Validate() error
}

// Decode strictly decodes params (a YAML mapping, or nil for "no params")
// into cfg, which must be a pointer to a struct already holding its
// defaults, and then validates it. Unknown keys are errors. Field names in
// errors are prefixed with prefix (e.g. "engines[0].params") and carry the
// line of the key in the YAML.
func Decode(params *yaml.Node, cfg Validator, prefix string) error {
	lines := map[string]int{}
	if params != nil && params.Kind != 0 {
		if params.Kind == yaml.ScalarNode && params.Tag == "!!null" {
			params = nil
		}
	}
	if params != nil && params.Kind != 0 {
		if params.Kind != yaml.MappingNode {
			return &FieldError{Field: prefix, Line: params.Line, Err: errors.New("must be a mapping")}
		}
		keyErr := checkKeys(params, reflect.TypeOf(cfg), prefix, "", lines)
		var typeErr error
		if err := params.Decode(cfg); err != nil {
			var te *yaml.TypeError
			if !errors.As(err, &te) {
				return Join(keyErr, &FieldError{Field: prefix, Line: params.Line, Err: cleanYAMLError(err)})
			}
			typeErr = typeErrors(te, prefix, params.Line, lines)
		}
		if keyErr != nil || typeErr != nil {
			// Values in error kept their defaults: validate the rest, so
			// that one run reports every problem.
			return Capped(Join(keyErr, typeErr, prefixErrors(cfg.Validate(), prefix, lines)))
		}
	}
	return prefixErrors(cfg.Validate(), prefix, lines)
}

// checkKeys reports keys of node that the struct type t does not declare,
// recursing into nested structs, and records the line of each key under
// its path relative to the parameters (rel).
func checkKeys(node *yaml.Node, t reflect.Type, prefix, rel string, lines map[string]int) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice && node.Kind == yaml.SequenceNode {
		var errs []error
		for i, item := range node.Content {
			idx := fmt.Sprintf("[%d]", i)
			lines[rel+idx] = item.Line
			errs = append(errs, checkKeys(item, t.Elem(), prefix+idx, rel+idx, lines))
		}
		return errors.Join(errs...)
	}
	if t.Kind() != reflect.Struct || node.Kind != yaml.MappingNode || t == reflect.TypeFor[yaml.Node]() {
		return nil // a yaml.Node holds a plugin's own parameters, checked by the plugin
	}
	fields := yamlFields(t)
	var errs []error
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, val := node.Content[i], node.Content[i+1]
		path, relPath := join(prefix, key.Value), join(rel, key.Value)
		ft, ok := fields[key.Value]
		if !ok {
			errs = append(errs, unknownKey(path, key, fields))
			continue
		}
		lines[relPath] = key.Line
		splitList(val, ft)
		if err := checkKeys(val, ft, path, relPath, lines); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// unknownKey is the error of key, at path, which fields do not declare.
func unknownKey(path string, key *yaml.Node, fields map[string]reflect.Type) error {
	msg := "unknown key"
	if s := Suggest(key.Value, sortedFieldNames(fields)); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return &FieldError{Field: path, Line: key.Line, Err: fmt.Errorf("%s (known: %s)", msg, strings.Join(sortedFieldNames(fields), ", "))}
}

// yamlFields maps the YAML key of each exported field of t to its type.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, inline, ok := yamlKey(f)
		switch {
		case !ok:
		case inline:
			maps.Copy(out, yamlFields(f.Type))
		default:
			out[name] = f.Type
		}
	}
	return out
}

// yamlKey is how YAML sees struct field f: its key (the lower-cased
// field name when the tag gives none) and whether it is inlined; ok is
// false when YAML ignores the field (unexported, or tagged "-").
func yamlKey(f reflect.StructField) (name string, inline, ok bool) {
	if !f.IsExported() {
		return "", false, false
	}
	name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return "", false, false
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name, strings.Contains(opts, "inline"), true
}

func sortedFieldNames(m map[string]reflect.Type) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// prefixErrors puts prefix in front of the Field of every FieldError in err
// and fills in lines it knows.
func prefixErrors(err error, prefix string, lines map[string]int) error {
	if err == nil {
		return nil
	}
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	out := make([]error, 0, len(list))
	for _, e := range list {
		var fe *FieldError
		if errors.As(e, &fe) {
			c := *fe
			if c.Line == 0 {
				c.Line = lines[c.Field]
			}
			c.Field = join(prefix, c.Field)
			out = append(out, &c)
			continue
		}
		out = append(out, &FieldError{Field: prefix, Err: e})
	}
	return errors.Join(out...)
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// cleanYAMLError strips the library's "yaml: unmarshal errors:" preamble.
func cleanYAMLError(err error) error {
	msg := strings.TrimSpace(strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:"))
	msg = strings.TrimPrefix(msg, "line 0: ") // a value set on the command line has no line
	return errors.New(strings.Join(strings.Fields(msg), " "))
}

// Join joins errs like errors.Join but flattens nested joins, so
// that Decode sees (and prefixes) every FieldError. Each
// error of sub is put under field prefix sub (for example "slurm").
func Join(errs ...error) error {
	var flat []error
	for _, e := range errs {
		flat = append(flat, flatten(e)...)
	}
	return errors.Join(flat...)
}

// Located puts the field errors of a plugin's build (its constructor's
// errors, after Decode succeeded) where they stand in the configuration:
// each *FieldError joined in err gets prefix in front of its field and,
// when it has none, the line of its top-level key in params. Other errors
// are kept as they are.
func Located(params *yaml.Node, prefix string, err error) error {
	if err == nil {
		return nil
	}
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	out := make([]error, 0, len(list))
	for _, e := range list {
		var fe *FieldError
		if !errors.As(e, &fe) {
			out = append(out, e)
			continue
		}
		c := *fe
		if c.Line == 0 {
			c.Line = KeyLine(params, topKey(c.Field))
		}
		c.Field = join(prefix, c.Field)
		out = append(out, &c)
	}
	return errors.Join(out...)
}

// KeyLine returns the line of key in the mapping params, or 0.
func KeyLine(params *yaml.Node, key string) int {
	if params != nil && params.Kind == yaml.DocumentNode && len(params.Content) == 1 {
		params = params.Content[0]
	}
	if params == nil || params.Kind != yaml.MappingNode {
		return 0
	}
	for i := 0; i+1 < len(params.Content); i += 2 {
		if params.Content[i].Value == key {
			return params.Content[i].Line
		}
	}
	return 0
}

// topKey is the first key of a dotted field path: "sources" of
// "sources[0].name".
func topKey(field string) string {
	if i := strings.IndexAny(field, ".["); i >= 0 {
		return field[:i]
	}
	return field
}

// unmarshalerType is yaml.Unmarshaler, for types that decode themselves.
var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// splitList turns a plain string scalar into a sequence, split at commas,
// when the field is a list, so that a list can be given on the command
// line (--engine-param blockSizes=18,36). A quoted scalar is left alone,
// and so is a type that reads YAML itself (a Command splits its string
// form at white space).
func splitList(val *yaml.Node, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	if t.Kind() != reflect.Slice || t.Elem().Kind() == reflect.Uint8 || val.Kind != yaml.ScalarNode ||
		val.Style != 0 || (val.Tag != "" && val.Tag != "!!str") {
		return
	}
	items := strings.Split(val.Value, ",")
	val.Kind, val.Tag, val.Value, val.Content = yaml.SequenceNode, "!!seq", "", make([]*yaml.Node, 0, len(items))
	for _, it := range items {
		val.Content = append(val.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: strings.TrimSpace(it), Line: val.Line, Column: val.Column})
	}
}

// Suggest returns the known name closest to key when it is close enough
// to be a typo (an edit distance of at most 2, or a case difference), or "".
func Suggest(key string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return k
		}
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
