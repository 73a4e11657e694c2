package analyzers

import (
	"go/ast"
	"path/filepath"
	"strings"
	"unicode"

	"golang.org/x/tools/go/analysis"
)

// Conventions: in internal/handlers/<svc>/, a file rpc_<name>.go holds the method of that RPC and no other
// RPC method (docs/reference-lint.md#conventions), so `scaffold rpc` and readers find it.
var Conventions = &analysis.Analyzer{
	Name: "conventions",
	Doc:  "handler RPC methods live in rpc_<name>.go",
	Run:  runConventions,
}

func snake(name string) string {
	var b strings.Builder
	runes := []rune(name)
	for i, r := range runes {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(runes[i-1]) || (i+1 < len(runes) && unicode.IsLower(runes[i+1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func runConventions(pass *analysis.Pass) (any, error) {
	for _, file := range pass.Files {
		name := pass.Fset.File(file.Pos()).Name()
		dir := filepath.ToSlash(filepath.Dir(name))
		if !strings.Contains(dir, "/internal/handlers/") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		base := filepath.Base(name)
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() || len(fn.Recv.List) != 1 {
				continue
			}
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); !ok || id.Name != "Handler" {
				continue
			}
			if fn.Type.Params.NumFields() != 2 || fn.Type.Results.NumFields() != 2 {
				continue // not an RPC shape (ctx, req) -> (resp, error)
			}
			want := "rpc_" + snake(fn.Name.Name) + ".go"
			if strings.HasPrefix(base, "rpc_") && base != want {
				pass.Reportf(fn.Name.Pos(), "RPC method %s is in %s; it belongs in %s (one file per RPC)", fn.Name.Name, base, want)
			}
		}
	}
	return nil, nil
}
