package analyzers

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// ReadOnlyFields: a struct field marked `framework:read-only` is written once, at creation; a function named
// Update* (an update handler or store method) never assigns it (docs/reference-lint.md#read-only-fields).
var ReadOnlyFields = &analysis.Analyzer{
	Name: "readonlyfields",
	Doc:  "framework:read-only fields are never assigned in Update functions",
	Run:  runReadOnlyFields,
}

// ComputedFields: a struct field marked `framework:computed` is the server's to compute; it is never assigned
// from a request (an expression reading a *connect.Request) (docs/reference-lint.md#computed-fields).
var ComputedFields = &analysis.Analyzer{
	Name: "computedfields",
	Doc:  "framework:computed fields are never assigned from a request",
	Run:  runComputedFields,
}

// assignments calls fn for each `x.F = value` (and `T{F: value}`) of a marked field in each function.
func assignments(pass *analysis.Pass, marked map[*types.Var]bool, fn func(decl *ast.FuncDecl, field *types.Var, at ast.Node, value ast.Expr)) {
	for _, file := range pass.Files {
		for _, d := range file.Decls {
			decl, ok := d.(*ast.FuncDecl)
			if !ok || decl.Body == nil {
				continue
			}
			ast.Inspect(decl.Body, func(n ast.Node) bool {
				switch node := n.(type) {
				case *ast.AssignStmt:
					for i, lhs := range node.Lhs {
						if v := fieldOf(pass, lhs); v != nil && marked[v] && i < len(node.Rhs) {
							fn(decl, v, lhs, node.Rhs[i])
						}
					}
				case *ast.KeyValueExpr:
					if id, ok := node.Key.(*ast.Ident); ok {
						if v, ok := pass.TypesInfo.Uses[id].(*types.Var); ok && marked[v] {
							fn(decl, v, node.Key, node.Value)
						}
					}
				}
				return true
			})
		}
	}
}

func runReadOnlyFields(pass *analysis.Pass) (any, error) {
	marked := markedFields(pass, "framework:read-only")
	assignments(pass, marked, func(decl *ast.FuncDecl, field *types.Var, at ast.Node, _ ast.Expr) {
		if strings.HasPrefix(decl.Name.Name, "Update") {
			pass.Reportf(at.Pos(), "%s is framework:read-only: %s must not assign it (set it at creation only)", field.Name(), decl.Name.Name)
		}
	})
	return nil, nil
}

func isRequest(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return false
	}
	return named.Obj().Name() == "Request" && named.Obj().Pkg().Path() == "connectrpc.com/connect"
}

func runComputedFields(pass *analysis.Pass) (any, error) {
	marked := markedFields(pass, "framework:computed")
	assignments(pass, marked, func(_ *ast.FuncDecl, field *types.Var, at ast.Node, value ast.Expr) {
		fromRequest := false
		ast.Inspect(value, func(n ast.Node) bool {
			if e, ok := n.(ast.Expr); ok && !fromRequest {
				if tv, ok := pass.TypesInfo.Types[e]; ok && tv.Type != nil && isRequest(tv.Type) {
					fromRequest = true
				}
			}
			return !fromRequest
		})
		if fromRequest {
			pass.Reportf(at.Pos(), "%s is framework:computed: compute it on the server, never copy it from the request", field.Name())
		}
	})
	return nil, nil
}
