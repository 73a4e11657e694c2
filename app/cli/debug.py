"""`framework debug ...` (docs/reference-debug.md): a debugging session over the Debug Adapter Protocol.

Each command is its own process; the session lives in a broker that `debug start` launches in
the background, reached through `.framework/debug-session.json` (engine/debug/session.py). What
each command does and prints is in app/cli/debug_ops.py (shared with the Typer-free fast path).
"""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.debug_ops import execute
from app.cli.options import JSON_OPTION
from app.registry import DEBUG_COMMANDS

app = group_app("framework", "debug")
TIMEOUT_OPTION = typer.Option(30.0, "--timeout", help="Seconds to wait for the target to stop again.")
FRAME_OPTION = typer.Option(0, "--frame", help="Stack frame index (0: where it stopped).")
RESUME_EXITS = ("Exit codes: 0 stopped (where: file, line, function, reason); 1 no session, the target "
                "exited, or it did not stop within --timeout.")


def _epilog(*examples: str, extra: str = "") -> str:
    text = "Examples:\n\n" + "\n\n".join(f"  {e}" for e in examples)
    return text + (f"\n\n{extra}" if extra else "")


def _exec(name: str, json_output: bool, **params: Any) -> None:
    raise typer.Exit(execute(name, params, json_output))


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
    _exec("start", json_output, what=what, attach=attach, port=port, env=env, replace=replace)


@app.command("status", help=DEBUG_COMMANDS["status"], epilog=_epilog("framework debug status --json"))
def status(tail: int = typer.Option(20, "--tail", help="Lines of the target's output to show."),
           json_output: bool = JSON_OPTION) -> None:
    _exec("status", json_output, tail=tail)


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
    _exec("break", json_output, where=where, func=func, cond=cond)


@app.command("breakpoints", help=DEBUG_COMMANDS["breakpoints"], epilog=_epilog("framework debug breakpoints --json"))
def breakpoints(json_output: bool = JSON_OPTION) -> None:
    _exec("breakpoints", json_output)


@app.command("clear", help=DEBUG_COMMANDS["clear"], epilog=_epilog("framework debug clear 2"))
def clear(bp_id: int = typer.Argument(..., help="Breakpoint id (from `debug breakpoints`)."),
          json_output: bool = JSON_OPTION) -> None:
    _exec("clear", json_output, id=bp_id)


def _resume_command(name: str) -> None:
    def command(timeout: float = TIMEOUT_OPTION, json_output: bool = JSON_OPTION) -> None:
        _exec(name, json_output, timeout=timeout)

    app.command(name, help=DEBUG_COMMANDS[name], epilog=_epilog(
        f"framework debug {name}", f"framework debug {name} --timeout 5 --json", extra=RESUME_EXITS))(command)


for _name in ("continue", "step", "step-in", "step-out"):
    _resume_command(_name)


@app.command("eval", help=DEBUG_COMMANDS["eval"], epilog=_epilog(
    "framework debug eval \"n*2\"", "framework debug eval self.path --frame 1 --json",
    extra="Exit codes: 0 evaluated; 1 no session, target running, or the expression raised (its message)."))
def eval_(expression: str = typer.Argument(..., help="Expression in the target's language."),
          frame: int = FRAME_OPTION, json_output: bool = JSON_OPTION) -> None:
    _exec("eval", json_output, expression=expression, frame=frame)


@app.command("args", help=DEBUG_COMMANDS["args"], epilog=_epilog("framework debug args", "framework debug args --json"))
def args(frame: int = FRAME_OPTION, json_output: bool = JSON_OPTION) -> None:
    _exec("args", json_output, frame=frame)


@app.command("locals", help=DEBUG_COMMANDS["locals"], epilog=_epilog("framework debug locals --frame 1"))
def locals_(frame: int = FRAME_OPTION, json_output: bool = JSON_OPTION) -> None:
    _exec("locals", json_output, frame=frame)


@app.command("stack", help=DEBUG_COMMANDS["stack"], epilog=_epilog("framework debug stack --json"))
def stack(json_output: bool = JSON_OPTION) -> None:
    _exec("stack", json_output)


@app.command("goroutines", help=DEBUG_COMMANDS["goroutines"], epilog=_epilog("framework debug goroutines --json"))
def goroutines(json_output: bool = JSON_OPTION) -> None:
    _exec("goroutines", json_output)


@app.command("stop", help=DEBUG_COMMANDS["stop"], epilog=_epilog(
    "framework debug stop", "framework debug stop --json",
    extra="Kills only what the session launched; an attached process is detached and keeps running."))
def stop(json_output: bool = JSON_OPTION) -> None:
    _exec("stop", json_output)
