"""`framework lint` (docs/reference-lint.md): the field's linters and the framework's analyzers over a project."""
