package analyzers

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// TimeBucketing: time buckets (days, hours) are computed in UTC; a bucket taken in the machine's local zone
// moves with the server's TZ (docs/reference-lint.md#time-bucketing). Reports time.Local passed to
// time.Date or In, and t.Local() calls.
var TimeBucketing = &analysis.Analyzer{
	Name: "timebucketing",
	Doc:  "time buckets are computed in UTC, never in the local zone",
	Run:  runTimeBucketing,
}

func isTimeObj(pass *analysis.Pass, expr ast.Expr, name string) bool {
	var id *ast.Ident
	switch e := ast.Unparen(expr).(type) {
	case *ast.SelectorExpr:
		id = e.Sel
	case *ast.Ident:
		id = e
	default:
		return false
	}
	obj := pass.TypesInfo.Uses[id]
	return obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == "time" && obj.Name() == name
}

func runTimeBucketing(pass *analysis.Pass) (any, error) {
	for _, file := range pass.Files {
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				if fn, ok := pass.TypesInfo.Uses[sel.Sel].(*types.Func); ok && fn.Pkg() != nil && fn.Pkg().Path() == "time" {
					switch fn.Name() {
					case "Local":
						pass.Reportf(call.Pos(), "time bucket in the local zone: use .UTC() (the server's TZ must not move buckets)")
						return true
					case "Date", "In", "Truncate":
						for _, arg := range call.Args {
							if isTimeObj(pass, arg, "Local") {
								pass.Reportf(arg.Pos(), "time.Local in a time bucket: use time.UTC (the server's TZ must not move buckets)")
							}
						}
					}
				}
			}
			return true
		})
	}
	return nil, nil
}
