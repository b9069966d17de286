package config

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// SchemaConn is an inline section of schemaSample, all of whose keys a
// request may set, except Hook: a command never is a request key.
type SchemaConn struct {
	Zone    string        `yaml:"zone"`
	Timeout time.Duration `yaml:"timeout"`
	Hook    Command       `yaml:"hook"`
}

type schemaTree struct {
	Name     string       `yaml:"name"`
	Children []schemaTree `yaml:"children"`
}

type schemaSample struct {
	SchemaConn `yaml:",inline" request:"true"`
	Mode       string         `yaml:"mode" enum:"apply,print"`
	Nodes      []string       `yaml:"nodes,omitempty" request:"true"`
	Sizes      []int          `yaml:"sizes"`
	Ratio      float64        `yaml:"ratio"`
	Enabled    bool           `yaml:"enabled"`
	File       string         `yaml:"file" path:"read"`
	Run        Command        `yaml:"run"`
	Labels     map[string]int `yaml:"labels"`
	Tree       *schemaTree    `yaml:"tree"`
	Skipped    string         `yaml:"-"`
	hidden     string
}

func TestSchemaOf(t *testing.T) {
	t.Parallel()
	got := SchemaOf(&schemaSample{SchemaConn: SchemaConn{Timeout: 30 * time.Second}, Mode: "apply", Sizes: []int{4, 8}, Enabled: true, hidden: "x"})
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	props := doc["properties"].(map[string]any)
	prop := func(k string) map[string]any { p, _ := props[k].(map[string]any); return p }
	want := []struct {
		key, kw string
		val     any
	}{
		{"zone", "type", "string"},
		{"zone", KeyRequest, true}, // an inline request:"true" struct: all its keys...
		{"hook", KeyRequest, nil},  // ...but a command
		{"timeout", "default", "30s"},
		{"timeout", "pattern", durationPattern},
		{"mode", "enum", []any{"apply", "print"}},
		{"mode", "default", "apply"},
		{"mode", KeyRequest, nil},
		{"nodes", "type", []any{"array", "string"}},
		{"nodes", KeyRequest, true},
		{"sizes", "default", []any{4.0, 8.0}},
		{"sizes", "items", map[string]any{"type": "integer"}},
		{"ratio", "type", "number"},
		{"enabled", "default", true},
		{"file", KeyPath, "read"},
		{"file", KeyRequest, nil}, // a file is the operator's to name
		{"run", "type", []any{"array", "string"}},
		{"labels", "additionalProperties", map[string]any{"type": "integer"}},
		{"tree", "type", "object"},
	}
	for _, w := range want {
		if got := prop(w.key)[w.kw]; !reflect.DeepEqual(got, w.val) {
			t.Errorf("%s.%s = %#v, want %#v", w.key, w.kw, got, w.val)
		}
	}
	for _, k := range []string{"Skipped", "skipped", "hidden", "-", "SchemaConn", "schemaconn"} {
		if _, ok := props[k]; ok {
			t.Errorf("property %q should not be in the schema", k)
		}
	}
	if doc["additionalProperties"] != false {
		t.Error("unknown keys must be refused (additionalProperties: false)")
	}
	// The recursive tree ends in an open object one level down.
	children := prop("tree")["properties"].(map[string]any)["children"].(map[string]any)["items"].(map[string]any)
	if children["type"] != "object" || children["properties"] != nil {
		t.Errorf("recursive type: %v", children)
	}
}

// TestSchemaRequestKeysAreSpec: the keys SchemaOf marks KeyRequest are
// SpecOf's RequestKeys.
func TestSchemaRequestKeysAreSpec(t *testing.T) {
	t.Parallel()
	spec := SpecOf(schemaSample{})
	var marked []string
	for k, p := range SchemaOf(schemaSample{})["properties"].(Schema) {
		if p.(Schema)[KeyRequest] == true {
			marked = append(marked, k)
		}
	}
	for _, k := range marked {
		if !spec.Allows(k) {
			t.Errorf("schema marks %q, spec does not allow it", k)
		}
	}
	if len(marked) != len(spec.RequestKeys) {
		t.Errorf("schema marks %v, spec allows %v", marked, spec.RequestKeys)
	}
	if spec.Allows("hook") {
		t.Error("a Command key under an inline request:\"true\" struct is a request key")
	}
}
