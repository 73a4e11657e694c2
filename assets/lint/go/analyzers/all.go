// Package analyzers holds the framework's go/analysis analyzers (docs/reference-lint.md#analyzers), run by the
// vet tool (../main.go) and by golangci-lint as the module plugin `framework` (../plugin).
package analyzers

import "golang.org/x/tools/go/analysis"

// All is every framework analyzer, in the order they report.
var All = []*analysis.Analyzer{
	OptionalDepsGuard, TimeBucketing, Conventions, ReadOnlyFields, ComputedFields, Contract, GuardedFields,
	HandlerTests, ConfigReach,
}
