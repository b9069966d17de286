package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Plugin names one provider or engine and holds its raw parameters, which
// the plugin decodes into its own typed configuration.
type Plugin struct {
	// Name is the registered plugin name, e.g. "sim" or "slurm".
	Name string `yaml:"name"`
	// Params are the plugin's own settings.
	Params yaml.Node `yaml:"params"`
}

// File is the configuration file read by `toposcope generate --config`
// and by the service.
type File struct {
	// Provider is the topology source.
	Provider Plugin `yaml:"provider"`
	// Engines are the outputs, in the order they are published.
	Engines []Plugin `yaml:"engines"`
	// Server configures the REST service (`toposcope serve`).
	Server Server `yaml:"server"`
	// Discovery configures the service's discovery loop.
	Discovery Discovery `yaml:"discovery"`
	// Store configures the service's embedded store.
	Store Store `yaml:"store"`
	// Kubernetes configures the service's node watcher and leader
	// election.
	Kubernetes Kubernetes `yaml:"kubernetes"`
	// Placement configures the service's placement ledger sources.
	Placement Placement `yaml:"placement"`
	// Paths bounds the files the plugins read and write.
	Paths Paths `yaml:"paths"`
}

// Default returns the configuration used when there is no file: no
// provider or engine, and the defaults of every service section.
func Default() *File {
	return &File{Server: DefaultServer(), Discovery: DefaultDiscovery(), Store: DefaultStore(), Kubernetes: DefaultKubernetes(), Placement: DefaultPlacement()}
}

// Load reads and strictly decodes a configuration file. Its error lists
// every problem found (see Parse).
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w: %w", ErrNoFile, err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return f, nil
}

// ErrNoFile is wrapped when the configuration file cannot be read.
var ErrNoFile = errors.New("configuration file unreadable")

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// Parse strictly decodes a configuration document. Unknown keys are
// errors that name the key and its line. The error lists every problem
// of the document at once (unknown keys, values of the wrong type,
// invalid values, in every section; at most MaxReported of them).
func Parse(data []byte) (*File, error) {
	f, err := ParseAll(data)
	if err != nil {
		return nil, Capped(err)
	}
	return f, nil
}

// ParseAll is Parse that also returns, with its error, the file as far as
// it decoded (values in error keep their defaults), so that a checker can
// go on to the plugins' parameters and report their problems in the same
// run. The file is nil when data is not YAML. Its error is not capped.
func ParseAll(data []byte) (*File, error) {
	f := *Default()
	lines, keyErr := checkSections(data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var typeErr error
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, yamlToFieldError(data, err) // not YAML: nothing decoded
		}
		typeErr = yamlToFieldError(data, withoutReported(te, keyErr))
	}
	return &f, Join(keyErr, typeErr, f.validate(), f.validateSections(lines))
}

// withoutReported drops from te the decoder's messages on lines that
// checkSections already reported (with the key's full path and a
// suggestion).
func withoutReported(te *yaml.TypeError, reported error) error {
	seen := map[int]bool{}
	for _, e := range flatten(reported) {
		var fe *FieldError
		if errors.As(e, &fe) {
			seen[fe.Line] = true
		}
	}
	keep := make([]string, 0, len(te.Errors))
	for _, msg := range te.Errors {
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			if line, _ := strconv.Atoi(m[1]); seen[line] {
				continue
			}
		}
		keep = append(keep, msg)
	}
	if len(keep) == 0 {
		return nil
	}
	return &yaml.TypeError{Errors: keep}
}

// yamlToFieldError turns yaml.v3's "line N: ..." messages into FieldErrors.
func yamlToFieldError(data []byte, err error) error {
	if err == nil {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return &FieldError{Field: "(document)", Line: line, Err: errors.New(m[2])}
		}
		return &FieldError{Field: "(document)", Err: err}
	}
	paths := valuePaths(data)
	return typeFieldErrors(te, func(line int) (string, int) {
		if p, ok := paths[line]; ok {
			return p, line
		}
		return "(document)", line
	})
}

// valuePaths maps the line of each scalar value of the document to its
// key path ("server.maxBodyBytes", "engines[0].name").
func valuePaths(data []byte) map[int]string {
	out := map[int]string{}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return out
	}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], join(path, n.Content[i].Value))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.ScalarNode:
			if _, seen := out[n.Line]; !seen && path != "" {
				out[n.Line] = path
			}
		}
	}
	walk(doc.Content[0], "")
	return out
}

var unmarshalMsg = regexp.MustCompile("^cannot unmarshal !!(\\w+) `(.*)` into (\\S+)$")

// typeMessage says in words what a yaml.v3 type error means: "want an
// integer, got "lots"".
func typeMessage(msg string) string {
	m := unmarshalMsg.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	want := "a " + m[3]
	switch t := m[3]; {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		want = "an integer"
	case strings.HasPrefix(t, "float"):
		want = "a number"
	case t == "bool":
		want = "true or false"
	case t == "time.Duration":
		want = "a duration such as 30s or 5m"
	case t == "string":
		want = "a string"
	case strings.HasPrefix(t, "[]"):
		want = "a list"
	case strings.HasPrefix(t, "map["):
		want = "a mapping"
	}
	return fmt.Sprintf("want %s, got %q", want, m[2])
}

func (f *File) validate() error {
	var errs []error
	if f.Provider.Name == "" && f.Provider.Params.Kind != 0 {
		errs = append(errs, Errorf("provider.name", "is required when provider.params is set"))
	}
	for i, e := range f.Engines {
		if e.Name == "" {
			errs = append(errs, Errorf(fmt.Sprintf("engines[%d].name", i), "is required"))
		}
	}
	errs = append(errs, PrefixFields("paths", f.Paths.Validate()))
	return errors.Join(errs...)
}

// SetParam sets key to a scalar value in a parameter mapping, creating the
// mapping if node is empty, and replacing an existing value. It is how
// command-line flags override file settings.
func SetParam(node *yaml.Node, key, value string) {
	if node.Kind == 0 || (node.Kind == yaml.ScalarNode && node.Tag == "!!null") {
		*node = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	val := &yaml.Node{Kind: yaml.ScalarNode, Value: value}
	if value == "" {
		val.Tag = "!!str" // an empty string, not null: KEY= sets the key to ""
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key {
			node.Content[i+1] = val
			return
		}
	}
	node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, val)
}

// SetParamList sets key to a sequence of scalar values, as SetParam does
// for one value.
func SetParamList(node *yaml.Node, key string, values []string) {
	SetParam(node, key, "")
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, v := range values {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: v})
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key {
			node.Content[i+1] = seq
		}
	}
}

// Param returns the scalar value of key in a parameter mapping, and false
// when the key is missing or not a scalar.
func Param(node *yaml.Node, key string) (string, bool) {
	if node == nil || node.Kind != yaml.MappingNode {
		return "", false
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key && node.Content[i+1].Kind == yaml.ScalarNode {
			return node.Content[i+1].Value, true
		}
	}
	return "", false
}
