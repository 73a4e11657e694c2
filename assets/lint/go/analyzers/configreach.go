package analyzers

import (
	"go/ast"
	"go/constant"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// ConfigReach: every environment variable the code reads by a constant name reaches it from the deploy
// config (docs/reference-lint.md#config-reach). This analyzer reports each such read (os.Getenv,
// os.LookupEnv with a constant key, a named constant included) outside _test.go files; `framework lint`
// keeps the reads of keys that no environment's workload sets.
var ConfigReach = &analysis.Analyzer{
	Name: "configreach",
	Doc:  "environment variables the code reads are set by the environments' workloads",
	Run:  runConfigReach,
}

func runConfigReach(pass *analysis.Pass) (any, error) {
	for _, file := range pass.Files {
		if strings.HasSuffix(pass.Fset.Position(file.Pos()).Filename, "_test.go") {
			continue
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			fn, ok := pass.TypesInfo.Uses[sel.Sel].(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "os" || (fn.Name() != "Getenv" && fn.Name() != "LookupEnv") {
				return true
			}
			tv, ok := pass.TypesInfo.Types[call.Args[0]]
			if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
				return true
			}
			key := constant.StringVal(tv.Value)
			pass.Reportf(call.Pos(), "environment variable %s is read here but no environment sets it", strconv.Quote(key))
			return true
		})
	}
	return nil, nil
}
