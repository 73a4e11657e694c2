"""Environments screen: every declared environment with its bound release, rollout phase, verify
summary, health and the age of its last promotion; live as the ledger, releases or KCL change.

Same engine calls as `framework env list` and `framework env status <env> --json` (and the Delivery
panel's, `framework ledger metrics --json`: screens/environments/delivery.py); they start once
the first frame is on screen and run on a daemon thread (screens/widgets/background.py); rows are
diffed by key so the cursor stays put on refresh; watchdog observers on deploy/kcl,
.framework/releases and the ledger file trigger one debounced reload.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static

from screens.base import DashboardScreen
from screens.environments.delivery import PANEL_DAYS, DeliveryPanel, MetricsLoaded, read_metrics
from screens.widgets.background import in_daemon_thread, read_worker
from screens.widgets.empty_state import EmptyState
from screens.widgets.table_keys import TableKeys, table_bindings
from screens.widgets.table_sync import sync_rows

COLUMNS = (("name", "Name"), ("kind", "Kind"), ("target", "Target"), ("release", "Release"),
           ("phase", "Phase"), ("verify", "Verify"), ("health", "Health"), ("promoted", "Promoted"),
           ("status", "Status"))


@dataclass
class EnvironmentsLoaded(Message):
    """Result of one engine call (either `result` or `error` is set)."""

    result: Any = None
    error: Any = None
    statuses: Any = None
    """env name -> EnvStatus (or the EngineError that env's status raised)."""


class KclFilesChanged(Message):
    """A file under deploy/kcl, .framework/releases or the ledger changed. Consecutive ones coalesce."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, KclFilesChanged)


def _row(env: Any, st: Any, clocks: bool) -> tuple[str, ...]:
    from screens.widgets.status_text import age, phase_summary, verify_summary

    if env.error:
        return (env.name, "-", "-", "-", "-", "-", "-", "-", "error: " + str(env.error.get("message", ""))[:60])
    if st is None or not hasattr(st, "convergence"):
        why = getattr(st, "message", "") if st is not None else ""
        return (env.name, env.kind or "-", env.target or "-", "-", "-", "-", "-", "-",
                ("status error: " + why)[:60] if why else "-")
    health = "-" if st.convergence == "unbound" else st.health
    status = st.convergence
    queued = getattr(st, "queued", None)
    if queued:  # hosted, waiting on a person: what it waits on and where to act
        status = f"queued: {queued.get('wait')} {queued.get('action_url') or queued.get('action') or ''}".strip()
    return (env.name, env.kind or "-", env.target or "-", st.release or "-", phase_summary(st.workloads),
            verify_summary(st.images), health, age((st.ledger or {}).get("newest_at"), clocks), status)


def _read(project_dir: Path) -> EnvironmentsLoaded:
    """The engine calls (on a daemon thread): `env list`, then `env status <env>` for each environment."""
    from engine.deploy.status import env_status
    from engine.environments.listing import list_environments
    from engine.errors import EngineError
    from engine.project import find_project

    try:
        project = find_project(project_dir)
        result = list_environments(project)
    except EngineError as exc:
        return EnvironmentsLoaded(error=exc)
    statuses: dict[str, Any] = {}
    for env in result.environments:
        if env.error:
            continue
        try:  # one environment's failure never hides the others (same data as env status <env> --json)
            statuses[env.name] = env_status(project, env.name)[0].environments[0]
        except EngineError as exc:
            statuses[env.name] = exc
    return EnvironmentsLoaded(result=result, statuses=statuses)


class EnvironmentsScreen(TableKeys, DashboardScreen):
    NAME = "environments"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("r", "reload", "Reload", id="environments.reload"),
        Binding("enter", "details", "Details", id="environments.details", show=False),
        Binding("c", "app.clusters", "Clusters", id="environments.clusters", show=False),  # screens/clusters.py
        *table_bindings("environments"),
    ]
    FILTER_PLACEHOLDER = "filter: name, kind, target or workload (esc clears)"
    # Focus the table as the screen is composed. Textual's default ("*") would focus the sidebar, the
    # first focusable widget, and on_mount's focus() would then move it: two extra restyles of the
    # sidebar and the table before the first frame (bench/dashboard.py).
    AUTO_FOCUS = "#env-table"

    def __init__(self) -> None:
        super().__init__()
        self.result: Any = None
        self.statuses: dict[str, Any] = {}
        self.load_error: Any = None
        self.loads = 0
        self._loading = 0
        self._observer: Any = None
        self._mounting: Any = None  # the empty state's mount, when one is under way

    def header(self, show_clock: bool) -> Widget:
        # The header's line in one widget: Textual's Header is four (~23k of the first paint's ~570k
        # Python calls, bench/dashboard.py).
        from screens.widgets.title_bar import TitleBar

        return TitleBar(show_clock=show_clock)

    def compose_body(self) -> ComposeResult:
        yield Static("loading environments ...", id="env-status", classes="status-line")
        table: DataTable[str] = DataTable(id="env-table", cursor_type="row", zebra_stripes=True)
        yield table
        # The empty state (#env-empty) is mounted after the table the first time it is shown (`_show_empty`):
        # hidden in the first frame, it cost three widgets' styling there (bench/dashboard.py).
        yield DeliveryPanel()

    def on_mount(self) -> None:
        from rich.text import Text

        table = self.query_one("#env-table", DataTable)
        for key, label in COLUMNS:  # as Text: a str label is parsed as markup, which loads rich's emoji table
            table.add_column(Text(label), key=key)
        table.focus()
        # First paint before the engine call: the worker's imports and ledger reads would otherwise
        # compete with the first frame for the GIL (bench/dashboard.py).
        self.app.after_first_frame(self.load)

    def on_unmount(self) -> None:
        self._stop_watching()

    # -- loading ---------------------------------------------------------------------------
    @work(exclusive=True, group="environments")
    async def load(self) -> None:
        self.load_delivery()
        self._loading += 1  # a count: a superseded (cancelled) load must not clear a newer one's mark
        try:
            loaded = await in_daemon_thread(partial(_read, self.app.project_dir), "environments-load")
        finally:
            self._loading -= 1
        self.post_message(loaded)

    @read_worker("delivery")
    def load_delivery(self) -> MetricsLoaded:
        return read_metrics(self.app.project_dir, days=PANEL_DAYS)

    def on_metrics_loaded(self, message: MetricsLoaded) -> None:
        self.query_one(DeliveryPanel).show(message)

    async def on_environments_loaded(self, message: EnvironmentsLoaded) -> None:
        self.result, self.load_error = message.result, message.error
        self.statuses = message.statuses or {}
        if message.error is not None:
            self._show_error(message.error)
        else:
            self.query_one("#env-table").display = True
            for empty in self.query("#env-empty"):
                empty.display = False
            self._render_rows()
            self._start_watching(Path(message.result.root))
        if self._mounting is not None:  # an empty state mounted just now: counted once it shows its text
            mounting, self._mounting = self._mounting, None
            await mounting
        self.loads += 1

    def _show_error(self, error: Any) -> None:
        body = error.message + (f"\n{error.hint}" if error.hint else "")
        self._show_empty("Cannot list environments", body + "\n\nSame as: framework env list")
        self.query_one("#env-status", Static).update("error")

    def _show_empty(self, title: str, body: str) -> None:
        """The empty state in place of the table: mounted after it the first time, updated after that."""
        self.query_one("#env-table").display = False
        found = self.query("#env-empty")
        if found:
            empty = found.only_one(EmptyState)
            empty.display = True
            empty.update(title, body)
        else:
            self._mounting = self.query_one("#body").mount(EmptyState(title, body, id="env-empty"), after="#env-table")

    def _visible(self) -> list[Any]:
        needle = self._filter_text()
        envs = self.result.environments if self.result else []
        if not needle:
            return list(envs)
        return [e for e in envs if needle in " ".join((e.name, e.kind or "", e.target or "", *e.workloads)).lower()]

    def _render_rows(self) -> None:
        """Diff by row key: update changed cells, add new rows, drop stale ones. Never clear()."""
        table = self.query_one("#env-table", DataTable)
        clocks = self.app.settings.show_volatile
        wanted = {e.name: _row(e, self.statuses.get(e.name), clocks) for e in self._visible()}
        sync_rows(table, [key for key, _ in COLUMNS], wanted)
        total = len(self.result.environments) if self.result else 0
        failed = len(self.result.failed) if self.result else 0
        shown = f"{len(wanted)} of {total}" if len(wanted) != total else f"{total}"
        status = f"{shown} environments in project {self.result.project}" if self.result else ""
        if failed:
            status += f" - {failed} failed to evaluate"
        self.query_one("#env-status", Static).update(
            status + "   (same as: framework env list; framework env status <env> --json)")
        if total == 0 and self.result is not None:
            self._show_empty("No environments declared", f"Create deploy/kcl/<env>/main.k under {self.result.root}.")

    # -- live refresh ----------------------------------------------------------------------
    def _start_watching(self, root: Path) -> None:
        """Watch deploy/kcl, the releases and the ledger file (not its runtime logs) for changes."""
        if self._observer is not None or not self.app.settings.watch:
            return
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        from engine.paths import ledger_home

        screen = self
        ledger = ledger_home()
        releases = root / ".framework" / "releases"

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                path = str(event.src_path)
                if path.startswith(str(ledger)) and not Path(path).name.startswith("ledger.sqlite3"):
                    return
                if path.endswith("-shm") or screen._loading:
                    return  # our own reads touch the shared-memory index: not a change
                screen.post_message(KclFilesChanged())

        observer = Observer()
        handler = Handler()
        targets = [(root / "deploy" / "kcl", True), (releases if releases.is_dir() else root / ".framework", True),
                   (ledger, False)]
        for path, recursive in targets:
            path.mkdir(parents=True, exist_ok=True) if path is ledger else None
            if path.is_dir():
                observer.schedule(handler, str(path), recursive=recursive)
        observer.daemon = True
        observer.start()
        self._observer = observer

    def _stop_watching(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer = None

    def on_kcl_files_changed(self, _: KclFilesChanged) -> None:
        self.reload_soon()

    # -- actions ---------------------------------------------------------------------------
    def _rows_ready(self) -> bool:
        return self.result is not None

    def _main_table(self) -> DataTable[str]:
        return self.query_one("#env-table", DataTable)

    @on(DataTable.RowSelected, "#env-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        self._open_details(str(event.row_key.value))

    def action_details(self) -> None:
        table = self._main_table()
        if table.row_count:
            self._open_details(str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))

    def _open_details(self, name: str) -> None:
        from screens.environments.detail import EnvironmentDetailScreen

        self.app.push_screen(EnvironmentDetailScreen(name))
