"""Environments (docs/reference-env.md): declared, evaluated, configured, diffed, created, shaped."""
