"""Human output of `env up`, `env down`, `env ps` and `env devstack ...` (data to stdout)."""

from __future__ import annotations

import sys
import time
from typing import Any


def _ports(ports: list[int]) -> str:
    return ", ".join(str(p) for p in ports) or "-"


def render_up(result: Any) -> None:
    from app.output import stdout_console

    console = stdout_console()
    where = f"key {result.key!r}" if result.key else "primary checkout"
    for phase in result.phases:
        console.print(f"{phase.name:<9} {phase.status:<8} {phase.detail}")
    console.print(f"seed      {result.seed}")
    if result.held:
        console.print(f"stack {result.env} ({where}) stopped" + (" on interrupt" if result.interrupted else ""))
        return
    console.print(f"stack {result.env} running ({where}, block {result.block}, ports +{result.port_offset}); "
                  f"logs in {result.stack_dir}/logs")
    for proc in result.processes:
        console.print(f"  {proc['name']:<12} {proc['kind']:<9} pid {proc['pid']:<8} ports {_ports(proc['ports'])}")
    console.print(f"stop it with: framework env down {result.env}")


def status_table(status: Any) -> Any:
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold",
                  title=f"{status.project} {status.env} (block {status.block}) — Ctrl-C stops the stack",
                  title_justify="left")
    for column in ("NAME", "KIND", "PID", "PORTS", "STATE", "LOG"):
        table.add_column(column)
    for p in status.processes:
        state = "[green]up[/]" if p.alive else "[red]down[/]"
        table.add_row(p.name, p.kind, str(p.pid), _ports(p.ports), state, p.log)
    return table


class LiveStatus:
    """Live status on a terminal (stderr), with progress lines printed above it."""

    def __init__(self) -> None:
        self.live: Any = None

    def progress(self, message: str) -> None:
        if self.live is not None:
            self.live.console.print(f"  {message}")
        else:
            sys.stderr.write(f"  {message}\n")
            sys.stderr.flush()

    def status(self, status: Any) -> None:
        if self.live is None:
            from rich.live import Live

            from app.output import stderr_console

            self.live = Live(status_table(status), console=stderr_console(), auto_refresh=False, transient=True)
            self.live.start()
        self.live.update(status_table(status), refresh=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


def render_down(result: Any) -> None:
    from app.output import stdout_console

    console = stdout_console()
    if not result.stacks:
        console.print("no dev stack to stop")
        return
    for stack in result.stacks:
        console.print(f"{stack.project} {stack.env} (key {stack.key!r}):")
        for p in stack.processes:
            console.print(f"  {p.name:<12} pid {p.pid:<8} {p.outcome.replace('_', ' ')}")


def render_ps(result: Any) -> None:
    from rich.table import Table

    from app.output import stdout_console

    console = stdout_console()
    if not result.stacks:
        console.print("no dev stacks on this machine")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("PROJECT", "ENV", "KEY", "BLOCK", "STATUS", "PROCESSES", "AGE", "ROOT"):
        table.add_column(column)
    for s in result.stacks:
        procs = ", ".join(f"{p.name}:{_ports(p.ports)}{'' if p.alive else ' (down)'}" for p in s.processes)
        age = f"{int(time.time() - s.started_at)}s"
        table.add_row(s.project, s.env, s.key or '""', str(s.block), s.status, procs, age, s.project_root)
    console.print(table)


def render_blocks(result: Any, stacks_only: bool) -> None:
    from rich.table import Table

    from app.output import stdout_console

    console = stdout_console()
    if stacks_only:
        for row in result.blocks:
            if row.label == "dev stack":
                console.print(row.key)
        return
    if not result.blocks:
        console.print(f"no port blocks held ({result.registry})")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("KEY", "BLOCK", "HOLDER", "RUNNING", "ORIGIN"):
        table.add_column(column)
    for row in result.blocks:
        origin = (row.origin or "-") + (" (gone)" if row.origin_exists is False else "")
        table.add_row(row.key or '""', str(row.block), row.label, ", ".join(row.stacks) or "-", origin)
    console.print(table)


def render_change(result: Any) -> None:
    from app.output import stdout_console

    console = stdout_console()
    verb = "released" if result.applied else "would release"
    if not result.reclaimed:
        console.print("nothing to reclaim")
    for e in result.reclaimed:
        console.print(f"{verb} key {e.key!r} (block {e.block}, {e.label})")
    if not result.applied and result.reclaimed:
        console.print("dry run: add --apply to release")
