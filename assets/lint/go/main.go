// Command frameworkvet is `framework lint`'s vet tool (docs/reference-lint.md#go-analyzers): go vet's passes and
// the framework's analyzers in one binary, run by `go vet -vettool` for runs that select analyzers or a scope.
// A whole run loads the packages once, in golangci-lint built with the analyzers as a module plugin (./plugin).
package main

import (
	"framework.dev/lint/analyzers"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/appends"
	"golang.org/x/tools/go/analysis/passes/assign"
	"golang.org/x/tools/go/analysis/passes/atomic"
	"golang.org/x/tools/go/analysis/passes/bools"
	"golang.org/x/tools/go/analysis/passes/composite"
	"golang.org/x/tools/go/analysis/passes/copylock"
	"golang.org/x/tools/go/analysis/passes/defers"
	"golang.org/x/tools/go/analysis/passes/errorsas"
	"golang.org/x/tools/go/analysis/passes/httpresponse"
	"golang.org/x/tools/go/analysis/passes/ifaceassert"
	"golang.org/x/tools/go/analysis/passes/lostcancel"
	"golang.org/x/tools/go/analysis/passes/nilfunc"
	"golang.org/x/tools/go/analysis/passes/printf"
	"golang.org/x/tools/go/analysis/passes/shift"
	"golang.org/x/tools/go/analysis/passes/stdmethods"
	"golang.org/x/tools/go/analysis/passes/stringintconv"
	"golang.org/x/tools/go/analysis/passes/structtag"
	"golang.org/x/tools/go/analysis/passes/tests"
	"golang.org/x/tools/go/analysis/passes/unmarshal"
	"golang.org/x/tools/go/analysis/passes/unreachable"
	"golang.org/x/tools/go/analysis/passes/unusedresult"
	"golang.org/x/tools/go/analysis/unitchecker"
)

// vetPasses are go vet's own passes (reported as linter "go vet" with the pass name as the rule).
var vetPasses = []*analysis.Analyzer{
	appends.Analyzer, assign.Analyzer, atomic.Analyzer, bools.Analyzer, composite.Analyzer,
	copylock.Analyzer, defers.Analyzer, errorsas.Analyzer, httpresponse.Analyzer, ifaceassert.Analyzer,
	lostcancel.Analyzer, nilfunc.Analyzer, printf.Analyzer, shift.Analyzer, stdmethods.Analyzer,
	stringintconv.Analyzer, structtag.Analyzer, tests.Analyzer, unmarshal.Analyzer, unreachable.Analyzer,
	unusedresult.Analyzer,
}

func main() {
	unitchecker.Main(append(vetPasses, analyzers.All...)...)
}
