"""Environments screen: every environment declared under deploy/kcl, live as files change.

Same engine call as `framework env list`; runs in a thread worker; rows are diffed by key so
the cursor stays put on refresh; a watchdog observer on deploy/kcl triggers a debounced reload.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from screens.base import DashboardScreen
from screens.widgets.empty_state import EmptyState

COLUMNS = (("name", "Name"), ("kind", "Kind"), ("target", "Target"), ("workloads", "Workloads"),
           ("status", "Status"), ("file", "File"))


@dataclass
class EnvironmentsLoaded(Message):
    """Result of one engine call (either `result` or `error` is set)."""

    result: Any = None
    error: Any = None


class KclFilesChanged(Message):
    """A file under deploy/kcl changed. High-rate: consecutive ones coalesce."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, KclFilesChanged)


def _row(env: Any) -> tuple[str, ...]:
    if env.error:
        return (env.name, "-", "-", "-", "error: " + str(env.error.get("message", ""))[:80], env.file)
    return (env.name, env.kind or "-", env.target or "-", ", ".join(env.workloads) or "-", "ok", env.file)


class EnvironmentsScreen(DashboardScreen):
    NAME = "environments"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("slash", "filter", "Filter", id="environments.filter"),
        Binding("r", "reload", "Reload", id="environments.reload"),
        Binding("enter", "details", "Details", id="environments.details", show=False),
        Binding("escape", "clear_filter", "Clear filter", id="environments.clear_filter", show=False),
        Binding("j", "cursor_down", "Down", id="environments.down", show=False),
        Binding("k", "cursor_up", "Up", id="environments.up", show=False),
        Binding("g", "cursor_top", "Top", id="environments.top", show=False),
        Binding("G", "cursor_bottom", "Bottom", id="environments.bottom", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.result: Any = None
        self.load_error: Any = None
        self.loads = 0
        self._observer: Any = None
        self._reload_timer: Any = None

    def compose_body(self) -> ComposeResult:
        yield Static("loading environments ...", id="env-status", classes="status-line")
        yield Input(placeholder="filter: name, kind, target or workload (esc clears)", id="filter")
        table: DataTable[str] = DataTable(id="env-table", cursor_type="row", zebra_stripes=True)
        yield table
        yield EmptyState("", "", id="env-empty")

    def on_mount(self) -> None:
        table = self.query_one("#env-table", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self.query_one("#env-empty").display = False
        self.query_one("#filter", Input).cursor_blink = self.app.settings.cursor_blink
        table.focus()
        self.load()

    def on_unmount(self) -> None:
        self._stop_watching()

    # -- loading ---------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="environments")
    def load(self) -> None:
        from engine.environments import list_environments
        from engine.errors import EngineError
        from engine.project import find_project

        try:
            result = list_environments(find_project(self.app.project_dir))
        except EngineError as exc:
            self.post_message(EnvironmentsLoaded(error=exc))
            return
        self.post_message(EnvironmentsLoaded(result=result))

    def on_environments_loaded(self, message: EnvironmentsLoaded) -> None:
        self.loads += 1
        self.result, self.load_error = message.result, message.error
        if message.error is not None:
            self._show_error(message.error)
            return
        self.query_one("#env-table").display = True
        self.query_one("#env-empty").display = False
        self._render_rows()
        self._start_watching(Path(message.result.root) / "deploy" / "kcl")

    def _show_error(self, error: Any) -> None:
        self.query_one("#env-table").display = False
        empty = self.query_one("#env-empty", EmptyState)
        empty.display = True
        body = error.message + (f"\n{error.hint}" if error.hint else "")
        empty.update("Cannot list environments", body + "\n\nSame as: framework env list")
        self.query_one("#env-status", Static).update("error")

    def _visible(self) -> list[Any]:
        needle = self.query_one("#filter", Input).value.strip().lower()
        envs = self.result.environments if self.result else []
        if not needle:
            return list(envs)
        return [e for e in envs if needle in " ".join((e.name, e.kind or "", e.target or "", *e.workloads)).lower()]

    def _render_rows(self) -> None:
        """Diff by row key: update changed cells, add new rows, drop stale ones. Never clear()."""
        table = self.query_one("#env-table", DataTable)
        wanted = {e.name: _row(e) for e in self._visible()}
        for key in [k.value for k in list(table.rows)]:
            if key not in wanted:
                table.remove_row(key)
        existing = {k.value for k in table.rows}
        for name, cells in wanted.items():
            if name in existing:
                for (col, _), value in zip(COLUMNS, cells, strict=True):
                    if table.get_cell(name, col) != value:
                        table.update_cell(name, col, value)
            else:
                table.add_row(*cells, key=name)
        total = len(self.result.environments) if self.result else 0
        failed = len(self.result.failed) if self.result else 0
        shown = f"{len(wanted)} of {total}" if len(wanted) != total else f"{total}"
        status = f"{shown} environments in project {self.result.project}" if self.result else ""
        if failed:
            status += f" - {failed} failed to evaluate"
        self.query_one("#env-status", Static).update(status + "   (same as: framework env list)")
        if total == 0 and self.result is not None:
            self.query_one("#env-table").display = False
            empty = self.query_one("#env-empty", EmptyState)
            empty.display = True
            empty.update("No environments declared",
                         f"Create deploy/kcl/<env>/main.k under {self.result.root}.")

    # -- live refresh ----------------------------------------------------------------------
    def _start_watching(self, kcl_dir: Path) -> None:
        if self._observer is not None or not self.app.settings.watch or not kcl_dir.is_dir():
            return
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        screen = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                screen.post_message(KclFilesChanged())

        observer = Observer()
        observer.schedule(Handler(), str(kcl_dir), recursive=True)
        observer.daemon = True
        observer.start()
        self._observer = observer

    def _stop_watching(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer = None

    def on_kcl_files_changed(self, _: KclFilesChanged) -> None:
        if self._reload_timer is not None:
            self._reload_timer.stop()
        self._reload_timer = self.set_timer(self.app.settings.debounce_seconds, self.load)

    # -- actions ---------------------------------------------------------------------------
    def action_reload(self) -> None:
        self.load()

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("visible")
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if box.value or box.has_class("visible"):
            box.value = ""
            box.remove_class("visible")
            self.query_one("#env-table").focus()
            self._render_rows()

    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        if self.result is not None:
            self._render_rows()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.query_one("#env-table").focus()

    def _table(self) -> DataTable[str]:
        return self.query_one("#env-table", DataTable)

    def action_cursor_down(self) -> None:
        self._table().action_cursor_down()

    def action_cursor_up(self) -> None:
        self._table().action_cursor_up()

    def action_cursor_top(self) -> None:
        self._table().move_cursor(row=0)

    def action_cursor_bottom(self) -> None:
        self._table().move_cursor(row=self._table().row_count - 1)

    @on(DataTable.RowSelected, "#env-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        self._open_details(str(event.row_key.value))

    def action_details(self) -> None:
        table = self._table()
        if table.row_count:
            self._open_details(str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))

    def _open_details(self, name: str) -> None:
        from screens.environment_detail import EnvironmentDetailScreen

        self.app.push_screen(EnvironmentDetailScreen(name))
