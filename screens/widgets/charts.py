"""Pictures of numbers, each with the table behind it one key away (`n`).

`sparkline` draws a series as block characters (the lowest block is zero, the tallest the series'
maximum); `timeline_row` draws one workload's phase spans against the rollout's duration, one
character and colour per phase, so a slow health check (a long `stabilizing`) or a crash loop
(`progressing` and `stabilizing` alternating) is a shape. `ChartPanel` holds a picture and its
numbers and shows one of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

BLOCKS = "▁▂▃▄▅▆▇█"
PHASE_MARKS: dict[str, tuple[str, str]] = {  # phase -> (character, style)
    "pending": ("·", "dim"),
    "progressing": ("▒", "yellow"),
    "stabilizing": ("▓", "cyan"),
    "ready": ("█", "green"),
    "DEGRADED": ("X", "bold red"),
    "SUPERSEDED": ("/", "magenta"),
    "not_waited": ("-", "dim"),
}


def sparkline(values: Sequence[float | None], *, top: float | None = None) -> str:
    """One character per value; a zero is the lowest block, `top` (default: the maximum) the tallest,
    None (nothing measured) a blank."""
    peak = top if top is not None else max((v for v in values if v is not None), default=0)
    last = len(BLOCKS) - 1

    def block(v: float | None) -> str:
        if v is None:
            return " "
        if v <= 0 or peak <= 0:
            return BLOCKS[0]
        return BLOCKS[max(1, min(last, round(v / peak * last)))]

    return "".join(block(v) for v in values)


def timeline_row(spans: Sequence[Any], duration: float, width: int) -> Text:
    """`width` cells covering 0..duration seconds; a cell shows the phase at its middle, and a span too
    short to hold any middle still gets the cell it starts in (a brief DEGRADED stays visible)."""
    step = duration / width if duration > 0 and width > 0 else 0.0
    cells: list[str | None] = []
    for i in range(width):
        middle = (i + 0.5) * step
        cells.append(next((s.phase for s in spans if s.start <= middle < s.end), None))
    for span in spans:
        if step and span.phase not in cells[int(span.start / step):int(span.end / step) + 1]:
            cells[min(width - 1, int(span.start / step))] = span.phase
    text = Text()
    for phase in cells:
        char, style = PHASE_MARKS.get(phase, ("?", "")) if phase else (" ", "")
        text.append(char, style=style)
    return text


def phase_legend(phases: Sequence[str]) -> Text:
    text = Text()
    for phase in phases:
        char, style = PHASE_MARKS.get(phase, ("?", ""))
        text.append(char, style=style)
        text.append(f" {phase}  ")
    return text


class ChartPanel(Vertical):
    """A picture (`#<id>-picture`) and the table behind it (`#<id>-numbers`); `show_numbers`
    switches between them."""

    DEFAULT_CSS: ClassVar[str] = """
    ChartPanel { height: auto; }
    ChartPanel > DataTable { height: auto; max-height: 20; }
    """

    def __init__(self, columns: Sequence[tuple[str, str]], *, id: str) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.columns = columns
        self.numbers_shown = False

    def compose(self) -> ComposeResult:
        yield Static("", id=f"{self.id}-picture")
        yield DataTable(id=f"{self.id}-numbers", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for key, label in self.columns:
            table.add_column(label, key=key)
        table.display = False

    def show_picture(self, picture: Text | str) -> None:
        self.query_one(f"#{self.id}-picture", Static).update(picture)

    def show_rows(self, rows: dict[str, Sequence[Any]]) -> None:
        from screens.widgets.table_sync import sync_rows

        sync_rows(self.query_one(DataTable), [k for k, _ in self.columns], rows)

    def show_numbers(self, shown: bool) -> None:
        self.numbers_shown = shown
        self.query_one(f"#{self.id}-picture", Static).display = not shown
        self.query_one(DataTable).display = shown
