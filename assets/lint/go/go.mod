module framework.dev/lint

go 1.24.0

require (
	github.com/golangci/plugin-module-register v0.1.2
	golang.org/x/tools v0.41.0
)
