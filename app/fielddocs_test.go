package app_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/internal/config"
)

const module = "github.com/toposcope/toposcope"

// TestFieldDocs keeps internal/config/fielddocs.tsv (the doc comments of
// every configuration struct's fields, which the schema and `toposcope
// providers --params` print) equal to the source (go test ./app/ -run
// FieldDocs -update).
func TestFieldDocs(t *testing.T) {
	t.Parallel()
	types := map[reflect.Type]bool{}
	collectStructs(reflect.TypeFor[config.File](), types)
	r := app.Registry()
	for _, c := range append(append(r.ProviderChoices(), r.EngineChoices()...), r.LedgerSourceChoices()...) {
		if c.Params.Defaults == nil {
			t.Errorf("%s: its ParamSpec holds no Defaults (config.SpecOf of its default Config)", c.Name)
			continue
		}
		collectStructs(reflect.TypeOf(c.Params.Defaults), types)
	}
	docs := map[string]string{}
	parsed := map[string]map[string]*ast.StructType{}
	for typ := range types {
		pkg := typ.PkgPath()
		if parsed[pkg] == nil {
			parsed[pkg] = structsOf(t, filepath.Join("..", strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")))
		}
		st := parsed[pkg][typ.Name()]
		if st == nil {
			t.Errorf("type %s.%s: not found in its source", pkg, typ.Name())
			continue
		}
		for _, f := range st.Fields.List {
			doc := paragraph(f.Doc)
			if doc == "" {
				doc = paragraph(f.Comment)
			}
			for _, n := range f.Names {
				if doc != "" && n.IsExported() {
					docs[pkg+"."+typ.Name()+"."+n.Name] = doc
				}
			}
		}
	}
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "%s\t%s\n", k, docs[k])
	}
	src := b.Bytes()
	const path = "../internal/config/fielddocs.tsv"
	if *update {
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("%s is not current (%v): run go test ./app/ -run FieldDocs -update", path, err)
	}
}

// collectStructs adds t and every struct type reachable from its fields
// that this module declares to types.
func collectStructs(t reflect.Type, types map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || types[t] || !strings.HasPrefix(t.PkgPath(), module) {
		return
	}
	types[t] = true
	for i := range t.NumField() {
		collectStructs(t.Field(i).Type, types)
	}
}

// structsOf parses the non-test Go files of dir and returns its struct
// types by name.
func structsOf(t *testing.T, dir string) map[string]*ast.StructType {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ast.StructType{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					out[ts.Name.Name] = st
				}
			}
			return true
		})
	}
	return out
}

// paragraph is a comment group as one line of text.
func paragraph(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.Join(strings.Fields(g.Text()), " ")
}
