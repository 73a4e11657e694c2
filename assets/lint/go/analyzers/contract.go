package analyzers

import (
	"go/ast"
	"path/filepath"

	"golang.org/x/tools/go/analysis"
)

// Contract: in a package with a contract.go, every exported method of a type declared in service.go is in one of
// contract.go's interfaces, unless marked `framework:exclude-contract` (docs/reference-lint.md#contract).
// framework.yaml `contracts.exclude` packages are dropped by `framework lint` after the run.
var Contract = &analysis.Analyzer{
	Name: "contract",
	Doc:  "exported methods of service.go are in contract.go",
	Run:  runContract,
}

func runContract(pass *analysis.Pass) (any, error) {
	var contract, service *ast.File
	for _, file := range pass.Files {
		switch filepath.Base(pass.Fset.File(file.Pos()).Name()) {
		case "contract.go":
			contract = file
		case "service.go":
			service = file
		}
	}
	if contract == nil || service == nil {
		return nil, nil
	}
	declared := map[string]bool{}
	ast.Inspect(contract, func(n ast.Node) bool {
		if it, ok := n.(*ast.InterfaceType); ok {
			for _, m := range it.Methods.List {
				for _, name := range m.Names {
					declared[name.Name] = true
				}
			}
		}
		return true
	})
	for _, d := range service.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || !fn.Name.IsExported() || declared[fn.Name.Name] || hasMarker(fn.Doc, "framework:exclude-contract") {
			continue
		}
		pass.Reportf(fn.Name.Pos(), "%s is exported from service.go but not in contract.go: add it to the contract, or mark it framework:exclude-contract", fn.Name.Name)
	}
	return nil, nil
}
