package layering

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkipsFailInCI reads every Go file of the module and checks each
// call of Skip, Skipf or SkipNow: the if or switch statement around it
// must look at CI (kubetest.InCI() or the CI environment variable), so
// that a test of a real component may skip on a laptop and fails in CI
// instead. make test's report (-fail-on-skip with CI=true) catches a
// skip when it happens; this test catches the unguarded call before.
func TestSkipsFailInCI(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".cache", ".artifacts", "bin", "dist", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(src, []byte(".Skip")) {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Skip" && sel.Sel.Name != "Skipf" && sel.Sel.Name != "SkipNow") {
				return true
			}
			checked++
			if !guardedByCI(stack, src, fset) {
				t.Errorf("%s: %s is not inside an if or switch that looks at CI: in CI (CI=true) it must fail, not skip",
					fset.Position(call.Pos()), sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("found only %d Skip calls: is the walk reading the module?", checked)
	}
}

// guardedByCI reports whether the innermost if or switch statement
// around the call (the last node of stack) mentions CI.
func guardedByCI(stack []ast.Node, src []byte, fset *token.FileSet) bool {
	for i := len(stack) - 2; i >= 0; i-- {
		switch stack[i].(type) {
		case *ast.IfStmt, *ast.SwitchStmt:
			text := string(src[fset.Position(stack[i].Pos()).Offset:fset.Position(stack[i].End()).Offset])
			return strings.Contains(text, "InCI()") || strings.Contains(text, `Getenv("CI")`)
		case *ast.FuncDecl, *ast.FuncLit:
			return false
		}
	}
	return false
}
