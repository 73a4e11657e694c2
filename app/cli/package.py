"""`framework package new` (docs/reference-authoring.md#packages-adapters-and-libraries): `scaffold package`
under its own name."""

from __future__ import annotations

from app.cli import group_app
from app.cli.scaffold import PACKAGE_EPILOG, package_command
from app.registry import FRAMEWORK

app = group_app("framework", "package")
app.command("new", help=FRAMEWORK.groups["package"].commands["new"], epilog=PACKAGE_EPILOG)(package_command)
