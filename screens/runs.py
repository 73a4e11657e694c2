"""Runs screen: recorded workflow runs, newest first, live; enter shows a run's steps, plan and tasks.

Same engine calls as `platform runs list` / `platform runs show`; polled at the settings' refresh
rate in a thread worker (a run rewrites its run.json after every step).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from screens.base import DashboardScreen
from screens.widgets.background import read_worker
from screens.widgets.empty_state import EmptyState
from screens.widgets.table_keys import TableKeys, table_bindings
from screens.widgets.table_sync import sync_rows

COLUMNS = (("id", "Run"), ("workflow", "Workflow"), ("status", "Status"), ("steps", "Steps"),
           ("calls", "Tool calls"), ("started", "Started"))
STEP_COLUMNS = (("index", "#"), ("kind", "Kind"), ("name", "Tool"), ("detail", "Detail"))
TASK_COLUMNS = (("id", "Task"), ("status", "Status"), ("title", "Title"), ("description", "Description"))


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

    @read_worker("runs")
    def load(self) -> RunsLoaded:
        from engine.errors import EngineError
        from engine.runs.store import list_runs

        try:
            return RunsLoaded(page=list_runs(limit=200))
        except EngineError as exc:
            return RunsLoaded(error=exc)

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

    def _rows_ready(self) -> bool:
        return self.page is not None and bool(self.page.runs)

    @on(DataTable.RowSelected, "#runs-table")
    def _open(self, event: DataTable.RowSelected) -> None:
        self.app.push_screen(RunDetailScreen(str(event.row_key.value)))


class RunDetailScreen(TableKeys, Screen[None]):
    """Live steps of one run (each tool call and result), its plan and tasks.

    While the run is running and the cursor is on the last step, new steps move the cursor to the
    newest one (follow); anywhere else the cursor stays where the user put it.
    """

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "back", "Back", id="run_detail.back"),
        Binding("t", "focus_tasks", "Tasks", id="run_detail.tasks"),
        *[b for b in table_bindings("run_detail") if b.key != "escape"],
    ]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.record: Any = None
        self.loads = 0

    def compose(self) -> ComposeResult:
        yield Header(show_clock=self.app.settings.show_clock)
        with Vertical(id="body"):
            yield Static(f"Run {self.run_id}", classes="title", markup=False)
            yield Static("loading ...", id="run-summary", markup=False)
            yield Input(placeholder="filter steps: kind, tool or detail (esc clears)", id="filter")
            yield DataTable(id="steps-table", cursor_type="row", zebra_stripes=True)
            with Vertical(id="run-plan-panel"):
                yield Static("", id="run-plan", markup=False)
                yield DataTable(id="tasks-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        for table_id, columns in (("#steps-table", STEP_COLUMNS), ("#tasks-table", TASK_COLUMNS)):
            table = self.query_one(table_id, DataTable)
            for key, label in columns:
                table.add_column(label, key=key)
        self.query_one("#tasks-table").display = False
        self.query_one("#filter", Input).cursor_blink = self.app.settings.cursor_blink
        self._main_table().focus()
        self.load()
        self.set_interval(self.app.settings.refresh_seconds, self._poll)

    def _steps_table(self) -> DataTable[str]:
        return self.query_one("#steps-table", DataTable)

    def _main_table(self) -> DataTable[str]:
        """The table j/k/g/G move: the tasks table when it has focus (`t`), else the steps."""
        tasks = self.query_one("#tasks-table", DataTable)
        return tasks if tasks.has_focus else self._steps_table()

    def _render_rows(self) -> None:
        if self.record is not None:
            self._render_steps(self.record)

    def _poll(self) -> None:
        if self.record is None or self.record.status == "running":
            self.load()

    @read_worker("run-detail")
    def load(self) -> RunLoaded:
        from engine.errors import EngineError
        from engine.runs.store import load_run

        try:
            return RunLoaded(record=load_run(self.run_id))
        except EngineError as exc:
            return RunLoaded(error=exc)

    def on_run_loaded(self, message: RunLoaded) -> None:
        self.loads += 1
        summary = self.query_one("#run-summary", Static)
        if message.error is not None:
            summary.update(f"error: {message.error.message}")
            return
        run = self.record = message.record
        summary.update(f"workflow {run.workflow}   status {run.status}   steps {len(run.steps)}   "
                       f"started {_when(run.started_at)}" + (f"\nerror: {run.error}" if run.error else "")
                       + f"\n(same as: platform runs show {run.id})")
        self._render_steps(run)
        self._render_plan(run)

    def _render_steps(self, run: Any) -> None:
        table = self._steps_table()
        needle = self.query_one("#filter", Input).value.strip().lower()
        # follow while the cursor sits on the newest step (the last poll may also carry the final status)
        follow = (table.cursor_row >= table.row_count - 1) if table.row_count else run.status == "running"
        rows = {}
        for step in run.steps:
            row = (str(step.index), step.kind, step.name or "-", _step_detail(step))
            if not needle or needle in " ".join(row).lower():
                rows[str(step.index)] = row
        sync_rows(table, [k for k, _ in STEP_COLUMNS], rows)
        if follow and table.row_count:
            table.move_cursor(row=table.row_count - 1)  # live-follow: the newest step stays in view

    def _render_plan(self, run: Any) -> None:
        plan = run.plan or {}
        tasks = run.tasks
        if plan:
            done = sum(1 for t in tasks if t.get("status") == "completed")
            head = (f"Plan: {plan.get('title', '')}  [{plan.get('status', '?')}, {plan.get('complexity', '?')}]"
                    f"   {done}/{len(tasks)} tasks completed")
            if plan.get("description"):
                head += f"\n{_short(plan['description'], 110)}"
        else:
            head = "No plan or tasks in this run." if not tasks else f"{len(tasks)} tasks"
        self.query_one("#run-plan", Static).update(head)
        table = self.query_one("#tasks-table", DataTable)
        table.display = bool(tasks)
        sync_rows(table, [k for k, _ in TASK_COLUMNS],
                  {str(t.get("id", n)): (str(t.get("id", n)), str(t.get("status", "?")),
                                         ("  " if t.get("parent_id") else "") + str(t.get("title", "")),
                                         _short(t.get("description", ""), 60))
                   for n, t in enumerate(tasks)})

    def action_focus_tasks(self) -> None:
        tasks = self.query_one("#tasks-table", DataTable)
        if tasks.display:
            (self._steps_table() if tasks.has_focus else tasks).focus()

    def action_back(self) -> None:
        """esc clears an open filter first, then goes back to the runs list."""
        box = self.query_one("#filter", Input)
        if box.value or box.has_class("visible"):
            self.action_clear_filter()
        else:
            self.app.pop_screen()


def _step_detail(step: Any) -> str:
    if step.kind == "tool_call":
        return _short(step.data.get("params"))
    if step.kind == "tool_result":
        return ("ERROR " if step.data.get("is_error") else "") + _short(step.data.get("output", ""))
    return _short(step.data.get("text", ""))
