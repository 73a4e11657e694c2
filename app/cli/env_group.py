"""The `framework env` group and what its command modules share (env.py, env_deploy.py, env_stacks.py)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.registry import FRAMEWORK

app = group_app("framework", "env")
HELP = FRAMEWORK.groups["env"].commands

DEFINE_OPTION = typer.Option(
    [],
    "-D",
    "--define",
    metavar="NAME=VALUE",
    help="Set a render option the environment declares (see `env options`). Repeatable.",
)


def current_project() -> Any:
    from engine.project import find_project

    return find_project()
