package sim

import (
	"bytes"
	"fmt"
	"testing"

	"gopkg.in/yaml.v3"
)

// yamlv3Root is the root node yaml.v3 reads from data.
func yamlv3Root(t testing.TB, data []byte) (*yaml.Node, error) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, err
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return doc.Content[0], nil
	}
	return &doc, nil
}

// sameTree reports where a and b differ in what the decoder reads (kind,
// tag, value, line) and in column and style.
func sameTree(a, b *yaml.Node, path string) error {
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || a.Line != b.Line || a.Column != b.Column || a.Style != b.Style {
		return fmt.Errorf("%s: kind %v tag %q value %q line %d column %d style %v, yaml.v3: kind %v tag %q value %q line %d column %d style %v",
			path, a.Kind, a.Tag, a.Value, a.Line, a.Column, a.Style, b.Kind, b.Tag, b.Value, b.Line, b.Column, b.Style)
	}
	if len(a.Content) != len(b.Content) {
		return fmt.Errorf("%s: %d children, yaml.v3 %d", path, len(a.Content), len(b.Content))
	}
	for i := range a.Content {
		if err := sameTree(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// TestBlockYAMLMatchesYAMLv3: wherever readBlockYAML reads a document,
// it reads the tree yaml.v3 reads; the bundled and generated models are
// read by it, and documents outside its style are left to yaml.v3.
func TestBlockYAMLMatchesYAMLv3(t *testing.T) {
	t.Parallel()
	type doc struct {
		name string
		data []byte
		fast bool // readBlockYAML must read it
	}
	var docs []doc
	for _, name := range bundledNames() {
		data, err := bundledFS.ReadFile("models/" + name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc{"bundled " + name, data, false})
	}
	for _, o := range []GenerateOptions{
		{Nodes: 1000, DomainSize: 18}, {Nodes: 700}, {Shape: ShapeNVL72, Nodes: 1000},
		{Nodes: 5000, SpinesPerCore: 2, DomainSize: 16, Prefix: "n"},
	} {
		data, err := Generate(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc{fmt.Sprintf("generated %+v", o), data, true})
	}
	for i, text := range []string{
		"name: a\nswitches:\n- id: s1\n  nodes: n[1-4]\n",                // a sequence as deep as its key
		"name: a\n\n# comment\nswitches:\n  - id: s1\n\n    nodes: n1\n", // blank lines and comments
		"name: a\ndescription: >-\n  one\n  two\n",                       // folded
		"name: a b  c\ngpus: 0\nx: 10\n",
		"a:\n  b:\n    c: d\n  e: f\n",
		"- a\n- b\n",
		"- a: 1\n  b: 2\n- c: 3\n",
		// Outside the style: yaml.v3 reads these.
		"name: 'quoted'\n", "name: \"q\"\n", "a: [1, 2]\n", "a: {b: c}\n", "a: &x b\nc: *x\n",
		"a: !!str 5\n", "a: 010\n", "a: 0x10\n", "a: 1.5\n", "a: -3\n", "a: yes\n", "a: Null\n", "a: ~\n",
		"a: true\n", "a: b # comment\n", "a:\n", "a:\nb: c\n", "---\na: b\n", "a: b\n---\nc: d\n",
		"a: b\n  c\n", "a:\n  plain\n  text\n", "a: >-\n  x\n\n  y\n", "a: >-\n  x\n    y\n", "a: >-\n  x\n  # y\n",
		"a: |\n  x\n", "a: b\r\n", "a:\tb\n", "a: b \n", "\xef\xbb\xbfa: b\n", "a: 2001-12-14\n", "a: 1e3\n",
		"-\n  a\n", "- - a\n", "a: b: c\n", "a:b\n", "a: b\n c: d\n", "  a: b\n", "", "# only\n", "a: 12345678901234567890\n",
		"a: b\nb:\n  - x\n  -y\n", "a:\n  - b\n - c\n",
	} {
		docs = append(docs, doc{fmt.Sprintf("case %d %q", i, text), []byte(text), i < 7})
	}
	for _, d := range docs {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			got, ok := readBlockYAML(d.data)
			if d.fast && !ok {
				t.Fatal("readBlockYAML left it to yaml.v3")
			}
			if !ok {
				return
			}
			want, err := yamlv3Root(t, d.data)
			if err != nil {
				t.Fatalf("readBlockYAML read a document yaml.v3 refuses: %v", err)
			}
			if err := sameTree(got, want, ""); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// FuzzBlockYAML: whatever readBlockYAML reads, yaml.v3 reads the same.
func FuzzBlockYAML(f *testing.F) {
	for _, s := range []string{"name: a\nswitches:\n  - id: s\n    nodes: n[1-2]\n", "a: >-\n  b\n  c\n", "- a: 1\n  b: x y\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := readBlockYAML(data)
		if !ok {
			return
		}
		want, err := yamlv3Root(t, data)
		if err != nil {
			t.Fatalf("readBlockYAML read %q, which yaml.v3 refuses: %v", data, err)
		}
		if err := sameTree(got, want, ""); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
	})
}

func BenchmarkDecodeDocument(b *testing.B) {
	data, err := Generate(GenerateOptions{Nodes: 300_000, DomainSize: 18})
	if err != nil {
		b.Fatal(err)
	}
	for _, impl := range []struct {
		name string
		read func() bool
	}{
		{"block", func() bool { _, ok := readBlockYAML(data); return ok }},
		{"yaml.v3", func() bool { _, err := yamlv3Root(b, data); return err == nil }},
	} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if !impl.read() {
					b.Fatal("not read")
				}
			}
		})
	}
}
