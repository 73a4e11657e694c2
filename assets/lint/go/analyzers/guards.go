package analyzers

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// GuardedFields: a function whose doc comment holds `framework:guards F[,G...]` must run before those fields are
// assigned: in every other function, an assignment to F comes after a call to the guard in the same body
// (docs/reference-lint.md#guarded-fields).
var GuardedFields = &analysis.Analyzer{
	Name: "guardedfields",
	Doc:  "fields a framework:guards function guards are assigned only after it runs",
	Run:  runGuardedFields,
}

func guardsOf(group *ast.CommentGroup) []string {
	if group == nil {
		return nil
	}
	for _, c := range group.List {
		text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		if rest, ok := strings.CutPrefix(text, "framework:guards"); ok {
			var out []string
			for _, f := range strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' || r == '=' }) {
				out = append(out, f)
			}
			return out
		}
	}
	return nil
}

func runGuardedFields(pass *analysis.Pass) (any, error) {
	guard := map[string]*types.Func{} // field name -> its guard
	for _, file := range pass.Files {
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok {
				if obj, ok := pass.TypesInfo.Defs[fn.Name].(*types.Func); ok {
					for _, field := range guardsOf(fn.Doc) {
						guard[field] = obj
					}
				}
			}
		}
	}
	if len(guard) == 0 {
		return nil, nil
	}
	for _, file := range pass.Files {
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			self := pass.TypesInfo.Defs[fn.Name]
			calls := map[*types.Func][]ast.Node{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					var id *ast.Ident
					switch f := call.Fun.(type) {
					case *ast.Ident:
						id = f
					case *ast.SelectorExpr:
						id = f.Sel
					}
					if id != nil {
						if obj, ok := pass.TypesInfo.Uses[id].(*types.Func); ok {
							calls[obj] = append(calls[obj], call)
						}
					}
				}
				return true
			})
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				assign, ok := n.(*ast.AssignStmt)
				if !ok {
					return true
				}
				for _, lhs := range assign.Lhs {
					v := fieldOf(pass, lhs)
					if v == nil {
						continue
					}
					g := guard[v.Name()]
					if g == nil || types.Object(g) == self {
						continue
					}
					called := false
					for _, c := range calls[g] {
						if c.Pos() < assign.Pos() {
							called = true
						}
					}
					if !called {
						pass.Reportf(lhs.Pos(), "%s is guarded by %s (framework:guards): call it before assigning %s", v.Name(), g.Name(), v.Name())
					}
				}
				return true
			})
		}
	}
	return nil, nil
}
