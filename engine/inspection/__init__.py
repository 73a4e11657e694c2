"""Project inspection (docs/reference-project.md): `project map`, `project audit` and the other read-only
`project` commands, one module per command or responsibility. Imports `engine.authoring` and `engine.lint`;
they never import this package."""
