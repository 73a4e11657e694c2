"""`framework env status`: the run both parsers share, and its argv parsed without Typer when well
formed (app/main.py FAST). Typer's command (app/cli/env_deploy.py) takes everything else: help,
usage errors, `--opt=value`, `--`, values starting with `-` or numbers in any but plain decimal form."""

from __future__ import annotations

import re
from typing import Any

from app.cli.fast_args import Options, encodable, parse

OPTIONS: Options = {
    "--json": ("json_output", bool), "--wait": ("wait", bool), "--history": ("history", bool),
    "--timeout": ("timeout", str), "--stability-window": ("stability_window", str), "--limit": ("limit", str),
    "--before": ("before", str), "--signal": ("signal", str),
}
DEFAULTS: dict[str, Any] = {"json_output": False, "wait": False, "history": False, "timeout": "300.0",
                            "stability_window": "2.0", "limit": "20", "before": None, "signal": None}
DECIMAL = re.compile(r"[0-9]+(\.[0-9]+)?")
WHOLE = re.compile(r"[0-9]+")


def fast(argv: list[str]) -> int | None:
    """`env status [ENV] [options]` (argv after `env status`); None hands anything else to Typer."""
    parsed = parse(argv, OPTIONS, DEFAULTS)
    if parsed is None:
        return None
    words, p = parsed
    if len(words) > 1 or any(w.startswith("-") for w in words):
        return None
    if not (DECIMAL.fullmatch(p["timeout"]) and DECIMAL.fullmatch(p["stability_window"])
            and WHOLE.fullmatch(p["limit"])):
        return None
    if any(p[k] is not None and p[k].startswith("-") for k in ("before", "signal")):
        return None
    if not encodable(argv):
        return None
    from engine.pydantic_plugins import skip_plugin_discovery

    skip_plugin_discovery()  # no importlib.metadata scan when no pydantic plugin is installed
    return run(words[0] if words else None, wait=p["wait"], timeout=float(p["timeout"]),
               stability_window=float(p["stability_window"]), history=p["history"], limit=int(p["limit"]),
               before=p["before"], signal=p["signal"], json_output=p["json_output"])


def run(env: str | None, *, wait: bool, timeout: float, stability_window: float, history: bool, limit: int,
        before: str | None, signal: str | None, json_output: bool) -> int:
    """The status of `env` (None: every declared environment), rendered; its exit code."""
    from app.cli.deploy_views import render_status
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.deploy.status import env_status as status
        from engine.project import find_project

        return status(find_project(), env, wait=wait, timeout=timeout, history=history, limit=limit,
                      before=before, stability_window=stability_window, signal=signal)

    return run_command(json_output, action, render_status, partial_error=_why)


def _why(result: Any) -> dict[str, Any]:
    first = next(s for s in result.environments if s.exit_code)
    names = {1: "wrong", 2: "undetermined", 6: "superseded", 7: "queued", 8: "wait_timed_out"}
    bad_images = [f"{i['name']} {i['state']}" for i in first.images if i["state"] != "match"]
    detail = first.message or ", ".join(bad_images) or first.health
    return {"code": names.get(first.exit_code, "failed"), "message": f"{first.env}: {detail}"}
