"""`framework ledger show`: the run both parsers share, and its argv parsed without Typer when well
formed (app/main.py FAST). Typer's command (app/cli/ledger.py) takes everything else: help, usage
errors, `--opt=value`, `--`, a `--limit` in any but plain decimal form."""

from __future__ import annotations

import sys
from typing import Any

from app.cli.deploy_views import _when
from app.cli.fast_args import encodable, parse


def fast(argv: list[str]) -> int | None:
    """`ledger show [ENV] [--limit N] [--json]` (argv after `ledger show`); None hands anything else to Typer."""
    parsed = parse(argv, {"--json": ("json_output", bool), "--limit": ("limit", str)},
                   {"json_output": False, "limit": "50"})
    if parsed is None:
        return None
    words, p = parsed
    if len(words) > 1 or any(w.startswith("-") for w in words) or not p["limit"].isascii() \
            or not p["limit"].isdigit():
        return None
    if not encodable(argv):
        return None
    from engine.pydantic_plugins import skip_plugin_discovery

    skip_plugin_discovery()  # no importlib.metadata scan when no pydantic plugin is installed
    return run(words[0] if words else None, int(p["limit"]), p["json_output"])


def run(env: str | None, limit: int, json_output: bool) -> int:
    """The ledger's rows (of `env`, else every environment), rendered; the exit code."""
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.ledger.transfer import show
        from engine.project import find_project

        return show(find_project(), env, limit), 0

    return run_command(json_output, action, render_show)


def render_show(r: Any) -> None:
    out = sys.stdout
    where = r.path if r.path.startswith("control plane") else f"machine ledger {r.path}"
    out.write(f"{where} (project {r.project})\n\npromotions:\n")
    for p in r.promotions:
        out.write(
            f"  {p['env']:<10} {p['id']}  {p['release']:<28} {p['direction']:<8} {_when(p['created_at'])} "
            f"{p['who']}\n"
        )
    out.write("applies:\n")
    for a in r.applies:
        out.write(f"  {a['env']:<10} {a['release']:<28} {a['phase']:<12} {a['outcome'] or 'in flight'}\n")
    out.write("local sessions:\n")
    for s in r.sessions:
        out.write(
            f"  {s['env']:<10} {s['worktree']} {s['branch']}{' dirty' if s['dirty'] else ''}"
            f"{' stopped' if s['stopped'] else ''}\n"
        )
