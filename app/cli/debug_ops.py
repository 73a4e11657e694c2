"""What each `framework debug` command does and prints, without Typer.

`app/cli/debug.py` declares the commands for Typer (help, examples, validation) and calls
`execute`; `app.main` calls `fast` first for the session commands (all but `start`), which parses
only well-formed invocations and otherwise returns None so Typer handles the rest (help, usage
errors). A step as a whole process then costs the interpreter and this module's imports, not
Typer's ~70 ms (bench/debug.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any


def _rel(path: str | None) -> str:
    if not path:
        return "?"
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("../..") else rel


def _where(stopped: dict[str, Any] | None) -> str:
    if not stopped:
        return ""
    return f"{_rel(stopped.get('file'))}:{stopped.get('line')} in {stopped.get('function')}"


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def render_start(r: dict[str, Any]) -> None:
    _out(f"debugging {r['target']}: {r['mode']} under {r['adapter']} (broker pid {r['pid']}, "
         f"adapter port {r['adapter_port']})")
    _out("next: framework debug break <file:line>, then framework debug continue")


def render_status(r: dict[str, Any]) -> None:
    line = f"{r['target']} [{r['mode']}] {r['state']}"
    if r.get("stopped"):
        line += f" at {_where(r['stopped'])} ({r['stopped'].get('reason')})"
    if r["state"] == "exited":
        line += f" (exit {r.get('target_exit_code')})"
    _out(line)
    for text in r.get("output") or []:
        _out(f"  | {text}")


def render_bp(b: dict[str, Any]) -> None:
    where = f"{_rel(b['file'])}:{b['line']}" if b.get("file") else f"func {b.get('function')}"
    cond = f" if {b['condition']}" if b.get("condition") else ""
    state = "verified" if b.get("verified") else "unverified" + (f" ({b['message']})" if b.get("message") else "")
    _out(f"#{b['id']} {where}{cond} {state}")


def render_breakpoints(r: dict[str, Any]) -> None:
    for b in r["breakpoints"]:
        render_bp(b)
    if not r["breakpoints"]:
        _out("no breakpoints")


def render_resume(r: dict[str, Any]) -> None:
    if r.get("stopped"):
        _out(f"stopped at {_where(r['stopped'])} ({r['stopped'].get('reason')})")
    elif r["state"] == "exited":
        _out(f"the target exited (exit {r.get('target_exit_code')})")
        for text in r.get("output") or []:
            _out(f"  | {text}")
    else:
        _out("still running")


def resume_code(r: dict[str, Any]) -> int:
    return 0 if r.get("stopped") else 1


def resume_error(r: dict[str, Any]) -> dict[str, Any]:
    if r["state"] == "exited":
        return {"code": "target_exited", "message": f"the target exited (exit {r.get('target_exit_code')})"}
    return {"code": "timeout", "message": "the target did not stop within --timeout",
            "hint": "it is still running; `framework debug continue` waits again"}


def render_vars(key: str) -> Callable[[dict[str, Any]], None]:
    def human(r: dict[str, Any]) -> None:
        f = r["frame"]
        _out(f"{key} of {f['function']} ({_rel(f['file'])}:{f['line']})")
        for v in r[key]:
            _out(f"  {v['name']} = {v['value']}" + (f"  ({v['type']})" if v.get("type") else ""))
        if not r[key]:
            _out("  (none)")
    return human


def render_stack(r: dict[str, Any]) -> None:
    for f in r["frames"]:
        _out(f"#{f['index']:<3} {f['function']}  {_rel(f['file'])}:{f['line']}")


def render_threads(r: dict[str, Any]) -> None:
    for t in r["threads"]:
        _out(f"{'*' if t['current'] else ' '} {t['id']:<6} {t['name']}")


def render_stop(r: dict[str, Any]) -> None:
    if r.get("detached"):
        state = "still running" if r.get("left_running") else "gone"
        _out(f"detached from {r['target']} (pid {r['detached']}, {state})")
    else:
        _out(f"stopped {r['target']}: {len(r.get('killed') or [])} process(es) ended")


def _call(op: str, args: dict[str, Any] | None = None, timeout: float = 30.0) -> Callable[[Any], Any]:
    def run(project: Any) -> Any:
        from engine.debug.session import call

        return call(project, op, args, timeout=timeout)
    return run


def _operation(name: str, p: dict[str, Any]) -> tuple[Callable[[Any], Any], Callable[[Any], None]]:
    """(engine call on the project, human renderer) of one command."""
    if name == "start":
        def start(project: Any) -> Any:
            from engine.debug import session, target

            resolved = target.resolve(project, p["what"], attach=p["attach"], env=p["env"], args=[])
            return session.start(project, resolved, port=p["port"], replace=p["replace"])
        return start, render_start
    if name == "break":
        def set_break(project: Any) -> Any:
            from engine.debug.location import parse
            from engine.debug.session import call

            return call(project, "break", parse(project, p["where"], func=p["func"], condition=p["cond"]))
        return set_break, render_bp
    if name == "stop":
        def stop(project: Any) -> Any:
            from engine.debug.session import stop as stop_session

            return stop_session(project)
        return stop, render_stop
    if name in ("continue", "step", "step-in", "step-out"):
        return _call(name, {"timeout": p["timeout"]}, timeout=p["timeout"]), render_resume
    if name == "eval":
        return _call("eval", {"expression": p["expression"], "frame": p["frame"]}), \
            lambda r: _out(str(r["result"]))
    if name in ("args", "locals"):
        return _call(name, {"frame": p["frame"]}), render_vars(name)
    if name == "clear":
        return _call("clear", {"id": p["id"]}), lambda b: _out(f"cleared #{b['id']}")
    if name == "status":
        return _call("status", {"tail": p["tail"]}), render_status
    renderers = {"breakpoints": render_breakpoints, "stack": render_stack, "goroutines": render_threads}
    return _call(name), renderers[name]


def execute(name: str, params: dict[str, Any], json_mode: bool) -> int:
    """Run one `debug` command and render it (one JSON document with --json); its exit code."""
    from app.output import run_command

    op, human = _operation(name, params)
    resume = name in ("continue", "step", "step-in", "step-out")

    def action() -> tuple[Any, int]:
        from engine.project import find_project

        payload = op(find_project())
        return payload, resume_code(payload) if resume else 0

    return run_command(json_mode, action, human, partial_error=resume_error if resume else None)


# name -> (positional names with their types, options: flag -> (param, type; bool for a flag), defaults)
_TIMEOUT = {"--timeout": ("timeout", float)}
_FRAME = {"--frame": ("frame", int)}
FAST: dict[str, tuple[list[tuple[str, type]], dict[str, tuple[str, type]], dict[str, Any]]] = {
    "status": ([], {"--tail": ("tail", int)}, {"tail": 20}),
    "break": ([("where", str)], {"--func": ("func", bool), "--cond": ("cond", str)}, {"func": False, "cond": None}),
    "breakpoints": ([], {}, {}),
    "clear": ([("id", int)], {}, {}),
    "continue": ([], _TIMEOUT, {"timeout": 30.0}),
    "step": ([], _TIMEOUT, {"timeout": 30.0}),
    "step-in": ([], _TIMEOUT, {"timeout": 30.0}),
    "step-out": ([], _TIMEOUT, {"timeout": 30.0}),
    "eval": ([("expression", str)], _FRAME, {"frame": 0}),
    "args": ([], _FRAME, {"frame": 0}),
    "locals": ([], _FRAME, {"frame": 0}),
    "stack": ([], {}, {}),
    "goroutines": ([], {}, {}),
    "stop": ([], {}, {}),
}


def fast(argv: list[str]) -> int | None:
    """`debug <command> ...` when it is well formed; None hands it to Typer (help, usage errors)."""
    if not argv or argv[0] not in FAST:
        return None
    from app.cli.fast_args import parse

    positional_spec, options, defaults = FAST[argv[0]]
    parsed = parse(argv[1:], {**options, "--json": ("--json", bool)}, {**defaults, "--json": False})
    if parsed is None:
        return None
    positional, params = parsed
    json_mode = params.pop("--json")
    if len(positional) != len(positional_spec):
        return None
    for (dest, kind), word in zip(positional_spec, positional, strict=True):
        try:
            params[dest] = kind(word)
        except ValueError:
            return None
    return execute(argv[0], params, json_mode)
