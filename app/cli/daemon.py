"""`platform daemon register | start | status | stop | logs | ls` (docs/reference-daemon.md#platform-daemon)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import PLATFORM

app = group_app("platform", "daemon")
HELP = PLATFORM.groups["daemon"].commands
NAME_OPTION = typer.Option("default", "--name", help="Daemon name = instance directory under ~/.platform/instances.")
SERVER_OPTION = typer.Option(None, "--server", help="Server URL (default: PLATFORM_SERVER_URL, else http://127.0.0.1:8080).")


def _table(rows: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key.ljust(width)}  {value}")


def _render(result: Any) -> None:
    from rich.table import Table

    from app.output import stdout_console

    if not result.instances:
        print(f"no daemon instances under {result.home}")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("INSTANCE", "RUNNING", "RECORD STATE", "NOTE"):
        table.add_column(column)
    for i in result.instances:
        record = (i.state or "(no state)") if i.record is not None else "-"
        table.add_row(i.name, "RUNNING" if i.running else "-", record, i.note)
    stdout_console().print(table)


@app.command(
    "ls",
    help=HELP["ls"],
    epilog="Examples:\n\n  platform daemon ls\n\n  platform daemon ls --json\n\n"
    "  Instances live in ~/.platform/instances (PLATFORM_INSTANCES_DIR overrides); RUNNING is read "
    "from each instance's lock, the record state from its runtime record.",
)
def ls(json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.daemon.instances import list_instances

        return list_instances(), 0

    raise typer.Exit(run_command(json_output, action, _render))


@app.command(
    "register",
    help=HELP["register"],
    epilog="Examples:\n\n  platform daemon register\n\n  platform daemon register --name laptop --server "
    "https://platform.example.com\n\n  The token is stored in ~/.platform/instances/<name>/credentials.json "
    "(0600) and never printed.",
)
def register(name: str = NAME_OPTION, server: str | None = SERVER_OPTION,
             gateway: str | None = typer.Option(None, "--gateway", help="host:port of the gateway (default: "
                                                "what the server answers)."),
             json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.daemon.register import register as do

        return do(server, name, interactive=True, gateway=gateway)[1], 0

    def human(r: Any) -> None:
        _table([("daemon", r.name), ("server", r.server), ("gateway", r.gateway),
                ("credentials", r.credentials_file), ("expires", r.expires_at)])

    raise typer.Exit(run_command(json_output, action, human))


@app.command(
    "start",
    help=HELP["start"],
    epilog="Examples:\n\n  platform daemon start\n\n  platform daemon start --root ~/src/app --root /tmp "
    "--background\n\n  PLATFORM_DAEMON_NON_INTERACTIVE=1 platform daemon start --name ci\n\n"
    "  Credentials: the instance's credentials file; else logged in: registers itself; else signs in "
    "through the browser first (never with --non-interactive: it publishes awaiting_credentials and "
    "polls for a credentials file).",
)
def start(
    name: str = NAME_OPTION,
    server: str | None = SERVER_OPTION,
    roots: list[Path] = typer.Option(None, "--root", help="Allowed root (repeatable; default: the current "
                                     "directory). Every path a request names must be inside one."),
    background: bool = typer.Option(False, "--background", help="Detach; logs go to the instance's daemon.log."),
    non_interactive: bool = typer.Option(False, "--non-interactive", help="Never open a browser; without "
                                         "credentials publish awaiting_credentials and poll for them."),
    gateway: str | None = typer.Option(None, "--gateway", help="host:port of the gateway (default: from the "
                                       "credentials file; PLATFORM_DAEMON_GATEWAY)."),
    auth_port: int = typer.Option(0, "--auth-port", help="Port of the daemon's local `auth serve` (127.0.0.1; 0: "
                                  "the system picks, published in the record; -1: off)."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    chosen = [r.resolve() for r in (roots or [Path.cwd()])]

    def action() -> tuple[Any, int]:
        from engine.daemon.agent import StartOptions, non_interactive_env
        from engine.daemon.agent import start as run
        from engine.daemon.control import DETACHED_ENV, start_background
        from engine.daemon.runtime import check_name
        from engine.errors import EngineError

        check_name(name)
        for root in chosen:
            if not root.is_dir():
                raise EngineError(f"allowed root {root} is not a directory", code="usage", exit_code=2)
        quiet = non_interactive or non_interactive_env()
        if background:
            argv = ["platform", "daemon", "start", "--name", name, *(["--server", server] if server else []),
                    *[a for r in chosen for a in ("--root", str(r))], *(["--gateway", gateway] if gateway else []),
                    "--auth-port", str(auth_port)]
            if quiet:
                argv.append("--non-interactive")
            return start_background(argv, name), 0
        return None, run(StartOptions(name=name, server=server, roots=chosen, non_interactive=quiet,
                                      gateway=gateway, log_to_stderr=not os.environ.get(DETACHED_ENV),
                                      auth_port=None if auth_port < 0 else auth_port))

    def human(r: Any) -> None:
        if r is not None:
            print(f"daemon {r.name} started in the background (pid {r.pid}, {r.state}); log: {r.log}")

    raise typer.Exit(run_command(json_output, action, human))


@app.command(
    "status",
    help=HELP["status"],
    epilog="Examples:\n\n  platform daemon status\n\n  platform daemon status --name laptop --json\n\n"
    "  Exit 0 only when the daemon runs and its gateway stream is established; 1 otherwise.",
)
def status(name: str = NAME_OPTION, json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.daemon.control import status as read

        return read(name)

    def human(s: Any) -> None:
        stream = s.stream or {}
        _table([("daemon", s.name), ("process", f"running (pid {s.pid})" if s.running else "not running"),
                ("state", s.state or "-"), ("stream", "established" if s.connected else "not established"),
                ("server", str(stream.get("server") or s.server or "-")), ("gateway", s.gateway or "-"),
                ("sessions", ", ".join(f"{k} {v}" for k, v in s.sessions.items()) or "none"),
                ("binary", s.binary or "-"), ("note", s.note)])

    def error(s: Any) -> dict[str, Any]:
        return {"code": "not_connected", "message": f"daemon {s.name}: {s.note}"}

    raise typer.Exit(run_command(json_output, action, human, partial_error=error))


@app.command(
    "stop",
    help=HELP["stop"],
    epilog="Examples:\n\n  platform daemon stop\n\n  platform daemon stop --force\n\n"
    "  platform daemon stop --grace 30 --json",
)
def stop(name: str = NAME_OPTION, force: bool = typer.Option(False, "--force", help="Kill at once (SIGKILL)."),
         grace: float = typer.Option(10.0, "--grace", min=0, help="Seconds to wait after the graceful signal."),
         json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.daemon.control import stop as do

        return do(name, force=force, grace=grace)

    def human(r: Any) -> None:
        print(f"daemon {r.name}: {r.note}" + (f" (pid {r.pid}, {' then '.join(r.signals)})" if r.signals else ""))

    def error(r: Any) -> dict[str, Any]:
        return {"code": "stop_failed", "message": f"daemon {r.name}: {r.note}"}

    raise typer.Exit(run_command(json_output, action, human, partial_error=error))


@app.command(
    "logs",
    help=HELP["logs"],
    epilog="Examples:\n\n  platform daemon logs\n\n  platform daemon logs -n 200 --no-follow\n\n"
    "  platform daemon logs --json   (the last lines; --json never follows)",
)
def logs(name: str = NAME_OPTION,
         lines: int = typer.Option(50, "-n", "--lines", min=0, help="How many of the last lines to show."),
         no_follow: bool = typer.Option(False, "--no-follow", help="Print the last lines and exit."),
         json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    end: list[int] = []  # where the printed lines end: the follow starts there (no line lost in between)

    def action() -> tuple[Any, int]:
        from engine.daemon.control import log_path, tail_at

        last, at = tail_at(name, lines)
        end.append(at)
        return {"name": name, "log": str(log_path(name)), "lines": last}, 0

    def human(doc: Any) -> None:
        for line in doc["lines"]:
            print(line)
        sys.stdout.flush()

    code = run_command(json_output, action, human)
    if code or json_output or no_follow:
        raise typer.Exit(code)
    from engine.daemon.control import follow

    try:
        for line in follow(name, start=end[0] if end else None):
            print(line, flush=True)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


def _render_stats(st: Any) -> None:
    print(f"daemon {st.name}, last {st.minutes} min: {st.samples} samples, {st.read_bytes} bytes read, "
          f"{st.written_bytes} bytes written, at most {st.sessions_max} sessions")
    busy = [m for m in st.per_minute if m.sessions_max is not None]
    if busy:
        print(f"{'MINUTE':<20} {'READ':>12} {'WRITTEN':>12} {'BYTES/S':>12} {'SESSIONS':>9}")
    for m in busy:
        import time

        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(m.start))
        print(f"{when:<20} {m.read_bytes:>12} {m.written_bytes:>12} {m.throughput_bps:>12g} {m.sessions_max:>9}")


@app.command(
    "stats",
    help=HELP["stats"],
    epilog="Examples:\n\n  platform daemon stats\n\n  platform daemon stats --name laptop --minutes 15 --json",
)
def stats(
    name: str = NAME_OPTION,
    minutes: int = typer.Option(60, "--minutes", help="The window: this many minutes up to now (1-1440)."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.daemon.runtime import check_name
        from engine.daemon.stats import daemon_stats

        return daemon_stats(check_name(name), minutes), 0

    raise typer.Exit(run_command(json_output, action, _render_stats))
