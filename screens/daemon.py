"""Daemon screen: the local tools daemon's instances under ~/.platform/instances
(docs/reference-daemon.md): RUNNING from the advisory lock, the runtime record's state, the gateway stream
(connected since, last heartbeat, server), the active sessions (shells, terminals, tool calls,
file transfers) as the daemon publishes them, and the selected instance's log tail, refreshed
live. Start, stop and register run the same commands as the CLI, shown beside each key; `s` draws the
selected instance's transfer throughput and session count (screens/daemon_stats.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Static

from screens.base import DashboardScreen
from screens.widgets.background import in_daemon_thread, read_worker
from screens.widgets.empty_state import EmptyState
from screens.widgets.table_keys import TableKeys, table_bindings
from screens.widgets.table_sync import sync_rows

COLUMNS = (("name", "Instance"), ("running", "Running"), ("state", "Record state"), ("stream", "Stream"),
           ("heartbeat", "Heartbeat"), ("sessions", "Sessions"), ("note", "Note"))
LOG_LINES = 8
ACTIONS = (("a", "start", "platform daemon start --name {name} --background"),
           ("x", "stop", "platform daemon stop --name {name}"),
           ("e", "register", "platform daemon register --name {name}"))


@dataclass
class InstancesLoaded(Message):
    result: Any = None
    logs: dict[str, list[str]] | None = None
    error: Any = None


@dataclass
class ActionDone(Message):
    line: str


def _clock(stamp: Any) -> str:
    return time.strftime("%H:%M:%S", time.localtime(stamp)) if isinstance(stamp, int | float) else "-"


def _row(i: Any) -> tuple[str, ...]:
    state = (i.state or "(no state)") if i.record is not None else "-"
    rec = i.record or {}
    stream = rec.get("stream") or {}
    connected = bool(i.running and stream.get("connected"))
    since = f"connected since {_clock(stream.get('since'))}" if connected else "-"
    if connected and stream.get("server"):
        since += f" ({str(stream['server']).split('@', 1)[-1]})"
    beat = _clock(stream.get("last_heartbeat")) if connected else "-"
    sessions = ", ".join(f"{k} {v}" for k, v in sorted((rec.get("sessions") or {}).items()) if v) or "-"
    return (i.name, "RUNNING" if i.running else "-", state, since, beat, sessions if i.running else "-", i.note)


def read_all() -> InstancesLoaded:
    from engine.daemon.control import tail
    from engine.daemon.instances import list_instances
    from engine.errors import EngineError

    result = list_instances()
    logs: dict[str, list[str]] = {}
    for i in result.instances:
        try:
            logs[i.name] = tail(i.name, LOG_LINES)
        except (EngineError, OSError):
            logs[i.name] = []
    return InstancesLoaded(result=result, logs=logs)


class DaemonScreen(TableKeys, DashboardScreen):
    NAME = "daemon"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("r", "reload", "Reload", id="daemon.reload"),
        Binding("a", "daemon('start')", "Start", id="daemon.start"),
        Binding("x", "daemon('stop')", "Stop", id="daemon.stop"),
        Binding("e", "daemon('register')", "Register", id="daemon.register"),
        Binding("s", "stats", "Stats", id="daemon.stats"),
        *table_bindings("daemon", filter=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.result: Any = None
        self.logs: dict[str, list[str]] = {}
        self.loads = 0
        self.last_action = ""

    def compose_body(self) -> ComposeResult:
        yield Static("reading instances ...", id="daemon-status", classes="status-line", markup=False)
        yield DataTable(id="daemon-table", cursor_type="row", zebra_stripes=True)
        yield EmptyState("", "", id="daemon-empty")
        yield Static("", id="daemon-actions", classes="hint", markup=False)
        yield Static("", id="daemon-log", markup=False)

    def on_mount(self) -> None:
        table = self.query_one("#daemon-table", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self.query_one("#daemon-empty").display = False
        table.focus()
        self._show_selected()
        self.load()
        self.set_interval(self.app.settings.refresh_seconds, self.load)

    def _main_table(self) -> DataTable[str]:
        return self.query_one("#daemon-table", DataTable)

    @read_worker("daemon")
    def load(self) -> InstancesLoaded:
        try:
            return read_all()
        except OSError as exc:
            return InstancesLoaded(error=exc)

    def selected(self) -> str:
        table = self._main_table()
        if self.result is None or not self.result.instances or table.row_count == 0:
            return "default"
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def on_instances_loaded(self, message: InstancesLoaded) -> None:
        self.loads += 1
        status = self.query_one("#daemon-status", Static)
        empty = self.query_one("#daemon-empty", EmptyState)
        table = self._main_table()
        if message.error is not None:
            table.display, empty.display = False, True
            empty.update("Cannot read daemon instances", str(message.error))
            return
        self.result, self.logs = message.result, message.logs or {}
        suffix = f"   {self.last_action}" if self.last_action else ""
        if not self.result.instances:
            table.display, empty.display = False, True
            empty.update("No daemon instances on this machine",
                         f"Nothing under {self.result.home}.\nStart one: platform daemon start --background")
            status.update(f"0 instances   (same as: platform daemon ls){suffix}")
        else:
            table.display, empty.display = True, False
            sync_rows(table, [k for k, _ in COLUMNS], {i.name: _row(i) for i in self.result.instances})
            running = sum(1 for i in self.result.instances if i.running)
            status.update(f"{len(self.result.instances)} instances, {running} running   "
                          f"(same as: platform daemon ls){suffix}")
        self._show_selected()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        name = self.selected()
        self.query_one("#daemon-actions", Static).update(
            "   ".join(f"{key} {label}: {command.format(name=name)}" for key, label, command in ACTIONS))
        lines = self.logs.get(name) or []
        self.query_one("#daemon-log", Static).update(
            f"log of {name} (platform daemon logs --name {name}):\n" + ("\n".join(lines) if lines else "(no log yet)"))

    def action_reload(self) -> None:
        self.load()

    def action_stats(self) -> None:
        from functools import partial

        from screens.daemon_stats import COLUMNS as STATS_COLUMNS
        from screens.daemon_stats import stats_chart
        from screens.widgets.chart_modal import ChartModal

        name = self.selected()
        self.app.push_screen(ChartModal(f"Stats of daemon {name}", STATS_COLUMNS, partial(stats_chart, name),
                                        f"platform daemon stats --name {name} --json"))

    def action_daemon(self, verb: str) -> None:
        """Run the CLI's own command for the selected instance, in the background."""
        name = self.selected()
        command = next(c for _k, v, c in ACTIONS if v == verb).format(name=name)
        self.last_action = f"running: {command}"
        self.query_one("#daemon-status", Static).update(self.last_action)
        self.run_worker(self._run(command), group="daemon-action", exclusive=True)

    async def _run(self, command: str) -> None:
        import shlex
        import subprocess
        import sys

        def call() -> str:
            argv = [sys.executable, "-m", "app.main", *shlex.split(command)]
            done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
            said = (done.stdout.strip() or done.stderr.strip()).splitlines()
            return f"{command}: exit {done.returncode}" + (f": {said[-1]}" if said else "")

        line = await in_daemon_thread(call, "daemon-action")
        self.post_message(ActionDone(line))

    def on_action_done(self, message: ActionDone) -> None:
        self.last_action = message.line
        self.load()
