module framework.dev/inspect

go 1.24.0
