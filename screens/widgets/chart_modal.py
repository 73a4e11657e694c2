"""A picture over a window, its numbers one key away (`n`), its headless twin named under it.

The screens that draw pictures (Rollouts' timeline, a webhook trigger's stats, the daemon's stats)
push a `ChartModal` with a `read` function: run on a daemon thread (it calls the same engine function
as the `--json` command), it returns the picture, the table rows behind it and a summary line, or
raises an EngineError that the modal shows. `r` reads again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static

from screens.widgets.background import read_worker
from screens.widgets.charts import ChartPanel


@dataclass
class Chart:
    summary: str
    picture: Text
    rows: dict[str, Sequence[Any]]


@dataclass
class ChartLoaded(Message):
    chart: Chart | None = None
    error: Any = None


class ChartModal(ModalScreen[None]):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("n", "numbers", "Numbers / picture", id="chart.numbers"),
        Binding("r", "reload", "Reload", id="chart.reload"),
        Binding("escape", "dismiss", "Close", id="chart.close"),
        Binding("q", "dismiss", "Close", id="chart.close_q", show=False),
    ]

    def __init__(self, title: str, columns: Sequence[tuple[str, str]], read: Callable[[], Chart],
                 command: str) -> None:
        super().__init__()
        self.title_text = title
        self.columns = columns
        self.read = read
        self.command = command
        self.chart: Chart | None = None
        self.loads = 0

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal chart-modal"):
            yield Static(self.title_text, classes="title", markup=False)
            yield Static("loading ...", id="chart-summary", markup=False)
            yield ChartPanel(self.columns, id="chart")
            yield Static(f"n numbers / picture   r reload   esc close\n(same as: {self.command})",
                         classes="hint", markup=False)

    def on_mount(self) -> None:
        self.load()

    @read_worker("chart")
    def load(self) -> ChartLoaded:
        from engine.errors import EngineError

        try:
            return ChartLoaded(chart=self.read())
        except EngineError as exc:
            return ChartLoaded(error=exc)

    def on_chart_loaded(self, message: ChartLoaded) -> None:
        self.loads += 1
        summary = self.query_one("#chart-summary", Static)
        panel = self.query_one(ChartPanel)
        if message.error is not None or message.chart is None:
            summary.update(f"error: {message.error.message}" if message.error is not None else "nothing to show")
            panel.show_picture("")
            panel.show_rows({})
            return
        self.chart = message.chart
        summary.update(message.chart.summary)
        panel.show_picture(message.chart.picture)
        panel.show_rows(message.chart.rows)

    def action_numbers(self) -> None:
        panel = self.query_one(ChartPanel)
        panel.show_numbers(not panel.numbers_shown)

    def action_reload(self) -> None:
        self.load()
