"""Delivery history of one trigger, paged with the server's cursor (`next_before`): time, status,
what it did, de-duplication key, filter outcome and run (docs/reference-webhooks.md#webhook-ingestion).
Only one page is ever loaded. enter inspects a delivery's payload; R replays it as a new delivery and run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from screens.webhooks.server import server_of
from screens.widgets.background import read_worker
from screens.widgets.table_keys import TableKeys, table_bindings
from screens.widgets.table_sync import sync_rows

PAGE = 50
COLUMNS = (("received", "Received"), ("status", "Status"), ("did", "What it did"), ("auth", "Auth"),
           ("dedupe", "De-duplication key"), ("filter", "Filter"), ("run", "Run"), ("detail", "Detail"))


@dataclass
class HistoryLoaded(Message):
    page: Any = None
    error: Any = None


@dataclass
class Replayed(Message):
    delivery: Any = None
    error: Any = None


def filter_outcome(d: Any, has_filter: bool) -> str:
    """What the trigger's filter decided for this delivery (`filter` decides whether a delivery proceeds)."""
    if d.outcome == "filtered_out":
        return "did not match"
    if d.outcome == "filter_error":
        return "error (did not match)"
    if d.auth_method == "replay":
        return "skipped (replay)"
    if not has_filter:
        return "no filter"
    if d.outcome == "run_started":
        return "matched"
    return "pending" if d.outcome == "queued" else "-"


def short_key(key: str | None) -> str:
    """De-duplication keys can be 68 characters (key:<sha256>); the full one is in the hint line."""
    if not key:
        return "-"
    return key if len(key) <= 20 else key[:19] + "…"


def _row(d: Any, has_filter: bool) -> tuple[str, ...]:
    run = f"{d.run.id} {d.run.status}" if d.run else "-"
    detail = d.detail or (f"retry of {d.duplicate_of}" if d.duplicate_of else "")
    return (d.received_at, str(d.status_code), d.outcome, d.auth_method or "-", short_key(d.dedupe_key),
            filter_outcome(d, has_filter), run, detail or "-")


class WebhookHistoryScreen(TableKeys, Screen[None]):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "app.pop_screen", "Back", id="webhook_history.back"),
        Binding("n", "next_page", "Older page", id="webhook_history.next_page"),
        Binding("p", "previous_page", "Newer page", id="webhook_history.previous_page"),
        Binding("r", "reload", "Reload", id="webhook_history.reload"),
        Binding("R", "replay", "Replay as new run", id="webhook_history.replay"),
        Binding("enter", "inspect", "Payload", id="webhook_history.inspect", show=False),
        *table_bindings("webhook_history", filter=False),
    ]

    def __init__(self, automation: str, trigger: str, trigger_filter: str | None = None) -> None:
        super().__init__()
        self.automation = automation
        self.trigger = trigger
        self.has_filter = bool(trigger_filter)
        self.cursors: list[str] = [""]  # cursor of every page up to the shown one (newest page: "")
        self.page: Any = None
        self.loads = 0
        self.replays = 0

    def compose(self) -> ComposeResult:
        yield Header(show_clock=self.app.settings.show_clock)
        with Vertical(id="body"):
            yield Static(f"Deliveries to {self.automation}/{self.trigger}", classes="title", markup=False)
            yield Static("loading history ...", id="history-status", classes="status-line", markup=False)
            yield DataTable(id="history-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="history-commands", classes="hint", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#history-table", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        table.focus()
        self.load()

    def _main_table(self) -> DataTable[str]:
        return self.query_one("#history-table", DataTable)

    def command(self) -> str:
        before = f" --before {self.cursors[-1]}" if self.cursors[-1] else ""
        return f"platform trigger history {self.automation} {self.trigger} --limit {PAGE}{before}"

    @read_worker("webhook-history")
    def load(self) -> HistoryLoaded:
        from engine.errors import EngineError
        from engine.hooks.client import history

        try:
            page = history(self.automation, self.trigger, PAGE, self.cursors[-1] or None,
                           server=server_of(self.app))
            return HistoryLoaded(page=page)
        except EngineError as exc:
            return HistoryLoaded(error=exc)

    def on_history_loaded(self, message: HistoryLoaded) -> None:
        self.loads += 1
        status = self.query_one("#history-status", Static)
        if message.error is not None:
            status.update(f"error: {message.error.message}   (same as: {self.command()})")
            return
        self.page = message.page
        self._render_rows()
        number = len(self.cursors)
        more = "n older page" if self.page.next_before else "last page"
        status.update(f"page {number}: {len(self.page.deliveries)} deliveries, {more}"
                      f"{', p newer page' if number > 1 else ''}   (same as: {self.command()})")
        self._show_commands()

    def _render_rows(self) -> None:
        if self.page is None:
            return
        rows = {d.id: _row(d, self.has_filter) for d in self.page.deliveries}
        sync_rows(self._main_table(), [k for k, _ in COLUMNS], rows)

    def selected(self) -> Any:
        table = self._main_table()
        if self.page is None or table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((d for d in self.page.deliveries if d.id == key), None)

    @on(DataTable.RowHighlighted, "#history-table")
    def _show_commands(self) -> None:
        d = self.selected()
        text = "No deliveries on this page." if d is None else (
            f"delivery {d.id}   de-duplication key {d.dedupe_key or '-'}\n"
            f"enter payload   platform trigger history {self.automation} {self.trigger} --json\n"
            f"R replay        platform trigger replay {self.automation} {d.id}")
        self.query_one("#history-commands", Static).update(text)

    def action_next_page(self) -> None:
        if self.page is not None and self.page.next_before:
            self.cursors.append(self.page.next_before)
            self.load()

    def action_previous_page(self) -> None:
        if len(self.cursors) > 1:
            self.cursors.pop()
            self.load()

    def action_inspect(self) -> None:
        from screens.webhooks.payload import PayloadModal

        d = self.selected()
        if d is not None:
            self.app.push_screen(PayloadModal(d, f"platform trigger history {self.automation} {self.trigger} --json"))

    @on(DataTable.RowSelected, "#history-table")
    def _open(self) -> None:
        self.action_inspect()

    def action_replay(self) -> None:
        d = self.selected()
        if d is not None:
            self._replay(d.id)

    @work(thread=True, exclusive=True, group="webhook-replay")
    def _replay(self, delivery_id: str) -> None:
        from engine.errors import EngineError
        from engine.hooks.client import replay

        try:
            self.post_message(Replayed(delivery=replay(self.automation, delivery_id, server=server_of(self.app))))
        except EngineError as exc:
            self.post_message(Replayed(error=exc))

    def on_replayed(self, message: Replayed) -> None:
        self.replays += 1
        if message.error is not None:
            self.notify(f"replay refused: {message.error.message}", severity="error")
            return
        d = message.delivery
        self.notify(f"replayed as delivery {d.id} (a new run); same as: platform trigger replay "
                    f"{self.automation} {d.detail.removeprefix('replay of ') if d.detail else ''}")
        # The replay is the newest delivery: back to the first page.
        self.cursors = [""]
        self.load()
