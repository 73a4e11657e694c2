"""Project authoring (spec 3): `project new`, `generate`, `build`, scaffolds, ownership records.

Kept light: every module is imported by the command that needs it.
"""
