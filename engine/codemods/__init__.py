"""Codemods over a project's own code: `project migrate tdd` (docs/reference-project.md#project-migrate-tdd)."""
