package analyzers

import (
	"go/ast"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// HandlerTests: every RPC method of a handler package (internal/handlers/<svc>/) is named in one of the package's
// _test.go files; a handler package without tests reports each of its RPCs (docs/reference-lint.md#tests).
// go vet analyzes a package twice (alone and with its tests): the check runs in the variant holding the tests,
// or in the package alone when its directory has no test file.
var HandlerTests = &analysis.Analyzer{
	Name: "handlertests",
	Doc:  "every handler RPC is named in a test",
	Run:  runTests,
}

func rpcMethods(pass *analysis.Pass) []*ast.FuncDecl {
	var out []*ast.FuncDecl
	for _, file := range pass.Files {
		if strings.HasSuffix(pass.Fset.File(file.Pos()).Name(), "_test.go") {
			continue
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() || len(fn.Recv.List) != 1 {
				continue
			}
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.Name == "Handler" && fn.Type.Params.NumFields() == 2 && fn.Type.Results.NumFields() == 2 {
				out = append(out, fn)
			}
		}
	}
	return out
}

func runTests(pass *analysis.Pass) (any, error) {
	if len(pass.Files) == 0 {
		return nil, nil
	}
	dir := filepath.Dir(pass.Fset.File(pass.Files[0].Pos()).Name())
	if !strings.Contains(filepath.ToSlash(dir), "/internal/handlers/") {
		return nil, nil
	}
	named := map[string]bool{}
	hasTests := false
	for _, file := range pass.Files {
		if !strings.HasSuffix(pass.Fset.File(file.Pos()).Name(), "_test.go") {
			continue
		}
		hasTests = true
		ast.Inspect(file, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				named[sel.Sel.Name] = true
			}
			return true
		})
	}
	if !hasTests {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), "_test.go") {
				return nil, nil // the variant with the tests checks this package
			}
		}
	}
	for _, fn := range rpcMethods(pass) {
		if !named[fn.Name.Name] {
			pass.Reportf(fn.Name.Pos(), "RPC %s is named in no test of this package: add one (or regenerate handler_test.go)", fn.Name.Name)
		}
	}
	return nil, nil
}
