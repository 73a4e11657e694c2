"""Domain logic for `platform` and `framework`.

Kept light on purpose: importing `engine` must not pull in heavy modules (pydantic, kcl-lib,
SQLAlchemy). Each domain package imports what it needs inside the functions that need it.
The engine never imports textual, typer or rich (import-linter contract in pyproject.toml).
"""

__version__ = "0.1.0"
