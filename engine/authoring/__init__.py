"""Project authoring (docs/reference-authoring.md): `project new`, `generate`, `build`, scaffolds, ownership records.

Kept light: every module is imported by the command that needs it.
"""
