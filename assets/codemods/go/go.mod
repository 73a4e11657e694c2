module framework.dev/codemods

go 1.24.0
