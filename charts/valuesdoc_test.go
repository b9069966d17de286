package charts_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const (
	docBegin = "<!-- values:begin (go test ./charts -update rewrites this table from values.yaml) -->"
	docEnd   = "<!-- values:end -->"
)

// valueDoc is one row of the README's values table.
type valueDoc struct{ key, def, text string }

// valueDocs walks values.yaml: a key whose head comment starts with "# --"
// is one row (its default shown as JSON); a mapping without one is walked
// into. A value with no description at any level is an error.
func valueDocs(node *yaml.Node, prefix string) ([]valueDoc, error) {
	var rows []valueDoc
	var errs []string
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		key := k.Value
		if prefix != "" {
			key = prefix + "." + k.Value
		}
		if text, ok := description(k.HeadComment); ok {
			var val any
			if err := v.Decode(&val); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			def, err := json.Marshal(val)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			rows = append(rows, valueDoc{key, string(def), text})
			continue
		}
		if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
			errs = append(errs, fmt.Sprintf("%s (line %d) has no \"# --\" description", key, k.Line))
			continue
		}
		sub, err := valueDocs(v, key)
		if err != nil {
			errs = append(errs, err.Error())
		}
		rows = append(rows, sub...)
	}
	if len(errs) > 0 {
		return rows, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return rows, nil
}

// description joins the comment lines from the first "# -- " on.
func description(comment string) (string, bool) {
	lines := strings.Split(comment, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "# -- ") {
			start = i
			break
		}
	}
	if start < 0 {
		return "", false
	}
	var words []string
	for i, l := range lines[start:] {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#"))
		if i == 0 {
			l = strings.TrimSpace(strings.TrimPrefix(l, "--"))
		}
		words = append(words, l)
	}
	return strings.Join(words, " "), true
}

func valuesTable(rows []valueDoc) string {
	var b strings.Builder
	b.WriteString(docBegin + "\n\n| key | default | description |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", r.key, strings.ReplaceAll(r.def, "|", `\|`), strings.ReplaceAll(r.text, "|", `\|`))
	}
	b.WriteString("\n" + docEnd)
	return b.String()
}

// TestValuesDoc: every value of values.yaml is described, and the chart
// README's table is the one those descriptions make.
func TestValuesDoc(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	rows, err := valueDocs(doc.Content[0], "")
	if err != nil {
		t.Fatalf("values.yaml:\n%v", err)
	}
	readmePath := filepath.Join(chartDir, "README.md")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	b, e := strings.Index(text, docBegin), strings.Index(text, docEnd)
	if b < 0 || e < b {
		t.Fatalf("%s lacks the markers %q … %q", readmePath, docBegin, docEnd)
	}
	want := text[:b] + valuesTable(rows) + text[e+len(docEnd):]
	if *update {
		if err := os.WriteFile(readmePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != text {
		t.Errorf("%s's values table is not current: run go test ./charts -update", readmePath)
	}
}
