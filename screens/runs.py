"""Runs screen: recorded workflow runs, newest first, live; enter shows a run's steps, plan and tasks.

Same engine calls as `platform runs list` / `platform runs show`; polled at the settings' refresh
rate in a thread worker (a run rewrites its run.json after every step).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from screens.base import DashboardScreen
from screens.widgets.empty_state import EmptyState
from screens.widgets.table_keys import TableKeys, table_bindings
from screens.widgets.table_sync import sync_rows

COLUMNS = (("id", "Run"), ("workflow", "Workflow"), ("status", "Status"), ("steps", "Steps"),
           ("calls", "Tool calls"), ("started", "Started"))
STEP_COLUMNS = (("index", "#"), ("kind", "Kind"), ("name", "Tool"), ("detail", "Detail"))


@dataclass
class RunsLoaded(Message):
    page: Any = None
    error: Any = None


@dataclass
class RunLoaded(Message):
    record: Any = None
    error: Any = None


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "-"


def _short(value: Any, width: int = 90) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


class RunsScreen(TableKeys, DashboardScreen):
    NAME = "runs"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("r", "reload", "Reload", id="runs.reload"),
        *table_bindings("runs"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.page: Any = None
        self.loads = 0

    def compose_body(self) -> ComposeResult:
        yield Static("loading runs ...", id="runs-status", classes="status-line")
        yield Input(placeholder="filter: run id, workflow or status (esc clears)", id="filter")
        yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
        yield EmptyState("", "", id="runs-empty")

    def on_mount(self) -> None:
        table = self.query_one("#runs-table", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self.query_one("#runs-empty").display = False
        self.query_one("#filter", Input).cursor_blink = self.app.settings.cursor_blink
        table.focus()
        self.load()
        self.set_interval(self.app.settings.refresh_seconds, self.load)

    def _main_table(self) -> DataTable[str]:
        return self.query_one("#runs-table", DataTable)

    @work(thread=True, exclusive=True, group="runs")
    def load(self) -> None:
        from engine.errors import EngineError
        from engine.runs.store import list_runs

        try:
            self.post_message(RunsLoaded(page=list_runs(limit=200)))
        except EngineError as exc:
            self.post_message(RunsLoaded(error=exc))

    def on_runs_loaded(self, message: RunsLoaded) -> None:
        self.loads += 1
        self.page = message.page
        empty = self.query_one("#runs-empty", EmptyState)
        table = self._main_table()
        if message.error is not None or not message.page.runs:
            table.display, empty.display = False, True
            if message.error is not None:
                empty.update("Cannot list runs", message.error.message)
            else:
                empty.update("No runs recorded yet",
                             f"Runs are recorded under {message.page.home}.\n"
                             "Start one with: platform run <workflow>   (same list: platform runs list)")
            return
        table.display, empty.display = True, False
        self._render_rows()

    def _render_rows(self) -> None:
        needle = self.query_one("#filter", Input).value.strip().lower()
        runs = [r for r in self.page.runs if not needle or needle in f"{r.id} {r.workflow} {r.status}".lower()]
        rows = {r.id: (r.id, r.workflow, r.status, str(r.steps), str(r.tool_calls), _when(r.started_at))
                for r in runs}
        sync_rows(self._main_table(), [k for k, _ in COLUMNS], rows)
        self.query_one("#runs-status", Static).update(
            f"{len(rows)} of {len(self.page.runs)} runs   (same as: platform runs list)")

    def action_reload(self) -> None:
        self.load()

    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        if self.page is not None and self.page.runs:
            self._render_rows()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self._main_table().focus()

    @on(DataTable.RowSelected, "#runs-table")
    def _open(self, event: DataTable.RowSelected) -> None:
        self.app.push_screen(RunDetailScreen(str(event.row_key.value)))


class RunDetailScreen(TableKeys, Screen[None]):
    """Live steps of one run (each tool call and result), its plan and tasks."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "app.pop_screen", "Back", id="run_detail.back"),
        *table_bindings("run_detail", filter=False),
    ]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.record: Any = None

    def compose(self) -> ComposeResult:
        yield Header(show_clock=self.app.settings.show_clock)
        with Vertical(id="body"):
            yield Static(f"Run {self.run_id}", classes="title", markup=False)
            yield Static("loading ...", id="run-summary", markup=False)
            yield DataTable(id="steps-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="run-plan", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#steps-table", DataTable)
        for key, label in STEP_COLUMNS:
            table.add_column(label, key=key)
        table.focus()
        self.load()
        self.set_interval(self.app.settings.refresh_seconds, self._poll)

    def _main_table(self) -> DataTable[str]:
        return self.query_one("#steps-table", DataTable)

    def _render_rows(self) -> None:
        if self.record is not None:
            self.on_run_loaded(RunLoaded(record=self.record))

    def _poll(self) -> None:
        if self.record is None or self.record.status == "running":
            self.load()

    @work(thread=True, exclusive=True, group="run-detail")
    def load(self) -> None:
        from engine.errors import EngineError
        from engine.runs.store import load_run

        try:
            self.post_message(RunLoaded(record=load_run(self.run_id)))
        except EngineError as exc:
            self.post_message(RunLoaded(error=exc))

    def on_run_loaded(self, message: RunLoaded) -> None:
        summary = self.query_one("#run-summary", Static)
        if message.error is not None:
            summary.update(f"error: {message.error.message}")
            return
        run = self.record = message.record
        summary.update(f"workflow {run.workflow}   status {run.status}   steps {len(run.steps)}   "
                       f"started {_when(run.started_at)}" + (f"\nerror: {run.error}" if run.error else "")
                       + f"\n(same as: platform runs show {run.id})")
        rows = {}
        for step in run.steps:
            if step.kind == "tool_call":
                detail = _short(step.data.get("params"))
            elif step.kind == "tool_result":
                detail = ("ERROR " if step.data.get("is_error") else "") + _short(step.data.get("output", ""))
            else:
                detail = _short(step.data.get("text", ""))
            rows[str(step.index)] = (str(step.index), step.kind, step.name or "-", detail)
        sync_rows(self._main_table(), [k for k, _ in STEP_COLUMNS], rows)
        lines = []
        if run.plan:
            lines.append(f"Plan: {run.plan.get('title', '')}  [{run.plan.get('status', '')}]")
        for task in run.tasks:
            lines.append(f"  [{task.get('status', '?')}] {task.get('id', '')} {task.get('title', '')}")
        self.query_one("#run-plan", Static).update("\n".join(lines) or "No plan or tasks in this run.")
