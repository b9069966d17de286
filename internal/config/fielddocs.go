package config

import (
	_ "embed"
	"strings"
)

// fieldDocs holds the doc comment of every configuration field, one a
// line: "<package path>.<type>.<field>", a tab, the comment as one
// paragraph. app's TestFieldDocs writes it from the source (-update) and
// keeps it current.
//
//go:embed fielddocs.tsv
var fieldDocs string

// fieldDocText returns the doc comment of a configuration field, keyed by
// package path, type name and field name, or "".
func fieldDocText(key string) string {
	for line := range strings.Lines(fieldDocs) {
		if k, doc, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t"); ok && k == key {
			return doc
		}
	}
	return ""
}
