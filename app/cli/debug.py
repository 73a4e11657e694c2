"""`framework debug ...` (spec 3, Local helpers): a debugging session over the Debug Adapter Protocol.

Each command is its own process; the session lives in a broker that `debug start` launches in
the background, reached through `.framework/debug-session.json` (engine/debug/session.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import typer

from app.cli import group_app
from app.registry import DEBUG_COMMANDS

app = group_app("framework", "debug")
JSON_OPTION = typer.Option(False, "--json", help="Print one JSON document (ok, exit_code, error, payload).")
TIMEOUT_OPTION = typer.Option(30.0, "--timeout", help="Seconds to wait for the target to stop again.")
FRAME_OPTION = typer.Option(0, "--frame", help="Stack frame index (0: where it stopped).")


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


def _run(json_output: bool, op: Callable[[Any], Any], human: Callable[[Any], None],
         code_of: Callable[[Any], int] | None = None,
         error_of: Callable[[Any], dict[str, Any]] | None = None) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.project import find_project

        payload = op(find_project())
        return payload, code_of(payload) if code_of else 0

    raise typer.Exit(run_command(json_output, action, human, partial_error=error_of))


def _epilog(*examples: str, extra: str = "") -> str:
    text = "Examples:\n\n" + "\n\n".join(f"  {e}" for e in examples)
    return text + (f"\n\n{extra}" if extra else "")


def _render_start(r: dict[str, Any]) -> None:
    sys.stdout.write(f"debugging {r['target']}: {r['mode']} under {r['adapter']} (broker pid {r['pid']}, "
                     f"adapter port {r['adapter_port']})\n")
    sys.stdout.write("next: framework debug break <file:line>, then framework debug continue\n")


@app.command("start", help=DEBUG_COMMANDS["start"], epilog=_epilog(
    "framework debug start api", "framework debug start services/worker",
    "framework debug start --attach 4242", "framework debug start api --replace --json",
    extra="Exit codes: 0 started; 1 unknown service or path, adapter failure, a session already live; 2 usage."))
def start(
    what: str = typer.Argument(None, help="A workload of the local environment, or a path to a program."),
    attach: int | None = typer.Option(None, "--attach", help="Attach to this running process instead."),
    port: int = typer.Option(0, "--port", help="The adapter's listen port (default: chosen by the OS)."),
    env: str = typer.Option("dev", "--env", help="The local environment whose workload to start."),
    replace: bool = typer.Option(False, "--replace", help="Stop a live session first."),
    json_output: bool = JSON_OPTION,
) -> None:
    def op(project: Any) -> Any:
        from engine.debug import session, target

        resolved = target.resolve(project, what, attach=attach, env=env, args=[])
        return session.start(project, resolved, port=port, replace=replace)

    _run(json_output, op, _render_start)


def _render_status(r: dict[str, Any]) -> None:
    line = f"{r['target']} [{r['mode']}] {r['state']}"
    if r.get("stopped"):
        line += f" at {_where(r['stopped'])} ({r['stopped'].get('reason')})"
    if r["state"] == "exited":
        line += f" (exit {r.get('target_exit_code')})"
    sys.stdout.write(line + "\n")
    for text in r.get("output") or []:
        sys.stdout.write(f"  | {text}\n")


@app.command("status", help=DEBUG_COMMANDS["status"], epilog=_epilog("framework debug status --json"))
def status(tail: int = typer.Option(20, "--tail", help="Lines of the target's output to show."),
           json_output: bool = JSON_OPTION) -> None:
    from engine.debug.session import call

    _run(json_output, lambda p: call(p, "status", {"tail": tail}), _render_status)


def _render_bp(b: dict[str, Any]) -> None:
    where = f"{_rel(b['file'])}:{b['line']}" if b.get("file") else f"func {b.get('function')}"
    cond = f" if {b['condition']}" if b.get("condition") else ""
    state = "verified" if b.get("verified") else "unverified" + (f" ({b['message']})" if b.get("message") else "")
    sys.stdout.write(f"#{b['id']} {where}{cond} {state}\n")


@app.command("break", help=DEBUG_COMMANDS["break"], epilog=_epilog(
    "framework debug break services/api/main.py:12", "framework debug break main.go:20 --cond \"n > 3\"",
    "framework debug break --func main.handle",
    extra="Exit codes: 0 set (verified or not: see the report); 1 no session, unreadable file:line, "
          "refused by the adapter."))
def break_(
    where: str = typer.Argument(..., help="<file:line> or a function name."),
    func: bool = typer.Option(False, "--func", help="WHERE is a function name."),
    cond: str | None = typer.Option(None, "--cond", help="Stop only when this expression is true."),
    json_output: bool = JSON_OPTION,
) -> None:
    def op(project: Any) -> Any:
        from engine.debug.location import parse
        from engine.debug.session import call

        return call(project, "break", parse(project, where, func=func, condition=cond))

    _run(json_output, op, _render_bp)


@app.command("breakpoints", help=DEBUG_COMMANDS["breakpoints"], epilog=_epilog("framework debug breakpoints --json"))
def breakpoints(json_output: bool = JSON_OPTION) -> None:
    from engine.debug.session import call

    def human(r: dict[str, Any]) -> None:
        for b in r["breakpoints"]:
            _render_bp(b)
        if not r["breakpoints"]:
            sys.stdout.write("no breakpoints\n")

    _run(json_output, lambda p: call(p, "breakpoints"), human)


@app.command("clear", help=DEBUG_COMMANDS["clear"], epilog=_epilog("framework debug clear 2"))
def clear(bp_id: int = typer.Argument(..., help="Breakpoint id (from `debug breakpoints`)."),
          json_output: bool = JSON_OPTION) -> None:
    from engine.debug.session import call

    _run(json_output, lambda p: call(p, "clear", {"id": bp_id}),
         lambda b: sys.stdout.write(f"cleared #{b['id']}\n"))


def _render_resume(r: dict[str, Any]) -> None:
    if r.get("stopped"):
        s = r["stopped"]
        sys.stdout.write(f"stopped at {_where(s)} ({s.get('reason')})\n")
    elif r["state"] == "exited":
        sys.stdout.write(f"the target exited (exit {r.get('target_exit_code')})\n")
        for text in r.get("output") or []:
            sys.stdout.write(f"  | {text}\n")
    else:
        sys.stdout.write("still running\n")


def _resume_code(r: dict[str, Any]) -> int:
    return 0 if r.get("stopped") else 1


def _resume_error(r: dict[str, Any]) -> dict[str, Any]:
    if r["state"] == "exited":
        return {"code": "target_exited", "message": f"the target exited (exit {r.get('target_exit_code')})"}
    return {"code": "timeout", "message": "the target did not stop within --timeout",
            "hint": "it is still running; `framework debug continue` waits again"}


def _resume_command(name: str, example: str) -> None:
    def command(timeout: float = TIMEOUT_OPTION, json_output: bool = JSON_OPTION) -> None:
        from engine.debug.session import call

        _run(json_output, lambda p: call(p, name, {"timeout": timeout}, timeout=timeout), _render_resume,
             _resume_code, _resume_error)

    app.command(name, help=DEBUG_COMMANDS[name], epilog=_epilog(
        example, f"framework debug {name} --timeout 5 --json",
        extra="Exit codes: 0 stopped (where: file, line, function, reason); 1 no session, the target "
              "exited, or it did not stop within --timeout."))(command)


for _name, _example in (("continue", "framework debug continue"), ("step", "framework debug step"),
                        ("step-in", "framework debug step-in"), ("step-out", "framework debug step-out")):
    _resume_command(_name, _example)


def _render_vars(key: str) -> Callable[[dict[str, Any]], None]:
    def human(r: dict[str, Any]) -> None:
        f = r["frame"]
        sys.stdout.write(f"{key} of {f['function']} ({_rel(f['file'])}:{f['line']})\n")
        for v in r[key]:
            sys.stdout.write(f"  {v['name']} = {v['value']}" + (f"  ({v['type']})" if v.get("type") else "") + "\n")
        if not r[key]:
            sys.stdout.write("  (none)\n")
    return human


@app.command("eval", help=DEBUG_COMMANDS["eval"], epilog=_epilog(
    "framework debug eval \"n*2\"", "framework debug eval self.path --frame 1 --json",
    extra="Exit codes: 0 evaluated; 1 no session, target running, or the expression raised (its message)."))
def eval_(expression: str = typer.Argument(..., help="Expression in the target's language."),
          frame: int = FRAME_OPTION, json_output: bool = JSON_OPTION) -> None:
    from engine.debug.session import call

    _run(json_output, lambda p: call(p, "eval", {"expression": expression, "frame": frame}),
         lambda r: sys.stdout.write(f"{r['result']}\n"))


@app.command("args", help=DEBUG_COMMANDS["args"], epilog=_epilog("framework debug args", "framework debug args --json"))
def args(frame: int = FRAME_OPTION, json_output: bool = JSON_OPTION) -> None:
    from engine.debug.session import call

    _run(json_output, lambda p: call(p, "args", {"frame": frame}), _render_vars("args"))


@app.command("locals", help=DEBUG_COMMANDS["locals"], epilog=_epilog("framework debug locals --frame 1"))
def locals_(frame: int = FRAME_OPTION, json_output: bool = JSON_OPTION) -> None:
    from engine.debug.session import call

    _run(json_output, lambda p: call(p, "locals", {"frame": frame}), _render_vars("locals"))


@app.command("stack", help=DEBUG_COMMANDS["stack"], epilog=_epilog("framework debug stack --json"))
def stack(json_output: bool = JSON_OPTION) -> None:
    from engine.debug.session import call

    def human(r: dict[str, Any]) -> None:
        for f in r["frames"]:
            sys.stdout.write(f"#{f['index']:<3} {f['function']}  {_rel(f['file'])}:{f['line']}\n")

    _run(json_output, lambda p: call(p, "stack"), human)


@app.command("goroutines", help=DEBUG_COMMANDS["goroutines"], epilog=_epilog("framework debug goroutines --json"))
def goroutines(json_output: bool = JSON_OPTION) -> None:
    from engine.debug.session import call

    def human(r: dict[str, Any]) -> None:
        for t in r["threads"]:
            sys.stdout.write(f"{'*' if t['current'] else ' '} {t['id']:<6} {t['name']}\n")

    _run(json_output, lambda p: call(p, "goroutines"), human)


@app.command("stop", help=DEBUG_COMMANDS["stop"], epilog=_epilog(
    "framework debug stop", "framework debug stop --json",
    extra="Kills only what the session launched; an attached process is detached and keeps running."))
def stop(json_output: bool = JSON_OPTION) -> None:
    def op(project: Any) -> Any:
        from engine.debug.session import stop as stop_session

        return stop_session(project)

    def human(r: dict[str, Any]) -> None:
        if r.get("detached"):
            state = "still running" if r.get("left_running") else "gone"
            sys.stdout.write(f"detached from {r['target']} (pid {r['detached']}, {state})\n")
        else:
            sys.stdout.write(f"stopped {r['target']}: {len(r.get('killed') or [])} process(es) ended\n")

    _run(json_output, op, human)
