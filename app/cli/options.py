"""Options shared by every command group (defined once; Typer reads them as parameter defaults)."""

from __future__ import annotations

import typer

JSON_OPTION = typer.Option(False, "--json", help="Print one JSON document (ok, exit_code, error, payload).")
