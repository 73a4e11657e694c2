// Package plugin registers the framework's analyzers as golangci-lint's module plugin `framework`
// (docs/reference-lint.md#go-analyzers): built into a custom golangci-lint, they run in golangci-lint's one
// type-checked load, beside govet and its standard linters, and are cached by golangci-lint's own cache.
package plugin

import (
	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"framework.dev/lint/analyzers"
)

// Name is the custom linter's name in golangci-lint's configuration and in its findings' FromLinter.
const Name = "framework"

func init() {
	register.Plugin(Name, func(any) (register.LinterPlugin, error) { return framework{}, nil })
}

type framework struct{}

func (framework) BuildAnalyzers() ([]*analysis.Analyzer, error) { return analyzers.All, nil }

// GetLoadMode: the analyzers read types (markers on fields, method sets), so they need the type-checked load.
func (framework) GetLoadMode() string { return register.LoadModeTypesInfo }
