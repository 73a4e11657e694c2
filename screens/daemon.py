"""Daemon screen: the local daemon instances under ~/.platform/instances, as `platform daemon ls`
reports them (spec 2: RUNNING from the advisory lock, the runtime record's state separately).

The daemon itself is not in this build: this view only reads what instances leave behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Static

from screens.base import DashboardScreen
from screens.widgets.background import read_worker
from screens.widgets.empty_state import EmptyState
from screens.widgets.table_keys import TableKeys, table_bindings
from screens.widgets.table_sync import sync_rows

COLUMNS = (("name", "Instance"), ("running", "Running"), ("state", "Record state"), ("note", "Note"))
NOT_BUILT = ("The daemon itself (platform daemon start / status / stop / logs) is not in this build; "
             "this view lists the instance directories it would leave.")


@dataclass
class InstancesLoaded(Message):
    result: Any = None
    error: Any = None


def _row(i: Any) -> tuple[str, ...]:
    state = (i.state or "(no state)") if i.record is not None else "-"
    return (i.name, "RUNNING" if i.running else "-", state, i.note)


class DaemonScreen(TableKeys, DashboardScreen):
    NAME = "daemon"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("r", "reload", "Reload", id="daemon.reload"),
        *table_bindings("daemon", filter=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.result: Any = None
        self.loads = 0

    def compose_body(self) -> ComposeResult:
        yield Static("reading instances ...", id="daemon-status", classes="status-line", markup=False)
        yield DataTable(id="daemon-table", cursor_type="row", zebra_stripes=True)
        yield EmptyState("", "", id="daemon-empty")
        yield Static(NOT_BUILT, id="daemon-note", classes="hint", markup=False)

    def on_mount(self) -> None:
        table = self.query_one("#daemon-table", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self.query_one("#daemon-empty").display = False
        table.focus()
        self.load()
        self.set_interval(self.app.settings.refresh_seconds, self.load)

    def _main_table(self) -> DataTable[str]:
        return self.query_one("#daemon-table", DataTable)

    @read_worker("daemon")
    def load(self) -> InstancesLoaded:
        from engine.daemon.instances import list_instances

        try:
            return InstancesLoaded(result=list_instances())
        except OSError as exc:
            return InstancesLoaded(error=exc)

    def on_instances_loaded(self, message: InstancesLoaded) -> None:
        self.loads += 1
        status = self.query_one("#daemon-status", Static)
        empty = self.query_one("#daemon-empty", EmptyState)
        table = self._main_table()
        if message.error is not None:
            table.display, empty.display = False, True
            empty.update("Cannot read daemon instances", str(message.error))
            return
        self.result = message.result
        if not self.result.instances:
            table.display, empty.display = False, True
            empty.update("No daemon instances on this machine",
                         f"Nothing under {self.result.home}.\nSame list: platform daemon ls")
            status.update("0 instances   (same as: platform daemon ls)")
            return
        table.display, empty.display = True, False
        self._render_rows()
        running = sum(1 for i in self.result.instances if i.running)
        status.update(f"{len(self.result.instances)} instances, {running} running   (same as: platform daemon ls)")

    def _render_rows(self) -> None:
        if self.result is not None:
            sync_rows(self._main_table(), [k for k, _ in COLUMNS], {i.name: _row(i) for i in self.result.instances})

    def action_reload(self) -> None:
        self.load()
