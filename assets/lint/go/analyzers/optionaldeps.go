package analyzers

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// OptionalDepsGuard: a struct field marked `framework:optional-dep` may be nil; a function that calls a
// method on it (or reads through it) must compare it with nil first (docs/reference-lint.md#optional-deps-guard).
var OptionalDepsGuard = &analysis.Analyzer{
	Name: "optionaldepsguard",
	Doc:  "uses of framework:optional-dep fields are guarded by a nil check",
	Run:  runOptionalDeps,
}

func markedFields(pass *analysis.Pass, marker string) map[*types.Var]bool {
	out := map[*types.Var]bool{}
	for _, file := range pass.Files {
		ast.Inspect(file, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			for _, f := range st.Fields.List {
				if !hasMarker(f.Doc, marker) && !hasMarker(f.Comment, marker) {
					continue
				}
				for _, name := range f.Names {
					if v, ok := pass.TypesInfo.Defs[name].(*types.Var); ok {
						out[v] = true
					}
				}
			}
			return true
		})
	}
	return out
}

func hasMarker(group *ast.CommentGroup, marker string) bool {
	if group == nil {
		return false
	}
	for _, c := range group.List {
		text := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*"))
		if text == marker || strings.HasPrefix(text, marker+" ") {
			return true
		}
	}
	return false
}

func fieldOf(pass *analysis.Pass, expr ast.Expr) *types.Var {
	sel, ok := ast.Unparen(expr).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	if s := pass.TypesInfo.Selections[sel]; s != nil && s.Kind() == types.FieldVal {
		v, _ := s.Obj().(*types.Var)
		return v
	}
	return nil
}

func runOptionalDeps(pass *analysis.Pass) (any, error) {
	optional := markedFields(pass, "framework:optional-dep")
	if len(optional) == 0 {
		return nil, nil
	}
	for _, file := range pass.Files {
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			guarded := map[*types.Var]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if bin, ok := n.(*ast.BinaryExpr); ok && (bin.Op == token.EQL || bin.Op == token.NEQ) {
					for _, side := range []ast.Expr{bin.X, bin.Y} {
						if v := fieldOf(pass, side); v != nil && optional[v] {
							guarded[v] = true
						}
					}
				}
				return true
			})
			reported := map[*types.Var]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				// x.Dep.Method(...) or x.Dep.Field: a use through the optional dependency.
				outer, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				v := fieldOf(pass, outer.X)
				if v == nil || !optional[v] || guarded[v] || reported[v] {
					return true
				}
				reported[v] = true
				pass.Reportf(outer.X.Pos(), "%s is an optional dependency (framework:optional-dep): check it against nil before using it", v.Name())
				return true
			})
		}
	}
	return nil, nil
}
