"""Keyboard habits shared by screens built around one table: j/k/g/G, `/` filter, esc clears it.

A screen mixes in `TableKeys`, names its table in `_main_table()`, re-renders in `_render_rows()`
(when `_rows_ready()`), reloads in `load()`, and adds `table_bindings("<screen id>")` to its BINDINGS
(every binding has an id). The mixin owns the filter box's events, `r` reload and the debounced
reload of file-watching screens (`reload_soon`). The filter box
is an Input with id `filter`: composed by the screen, or, when the screen names a
`FILTER_PLACEHOLDER` instead, mounted above the table on the first `/` (an Input is a good part of
a screen's mount time; the first screen leaves it out of its first frame, bench/dashboard.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual.binding import Binding
from textual.widgets import DataTable, Input


def table_bindings(prefix: str, *, filter: bool = True) -> list[Binding]:  # noqa: A002 - the key's name
    keys = [
        Binding("j", "cursor_down", "Down", id=f"{prefix}.down", show=False),
        Binding("k", "cursor_up", "Up", id=f"{prefix}.up", show=False),
        Binding("g", "cursor_top", "Top", id=f"{prefix}.top", show=False),
        Binding("G", "cursor_bottom", "Bottom", id=f"{prefix}.bottom", show=False),
    ]
    if filter:
        keys = [Binding("slash", "filter", "Filter", id=f"{prefix}.filter"),
                Binding("escape", "clear_filter", "Clear filter", id=f"{prefix}.clear_filter", show=False),
                *keys]
    return keys


class TableKeys:
    FILTER_PLACEHOLDER: ClassVar[str] = ""
    """Set by a screen that does not compose `#filter`: the placeholder of the box `/` mounts."""

    # Provided by the screen that mixes this in (declared here for readers and type checkers).
    app: Any
    query: Any
    query_one: Any
    _main_table: Callable[[], DataTable[str]]
    _render_rows: Callable[[], None]
    load: Callable[[], Any]
    set_timer: Callable[..., Any]
    _reload_timer: Any = None

    def _rows_ready(self) -> bool:
        """Whether there are rows to re-render when the filter changes (a screen narrows this)."""
        return True

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter" and self._rows_ready():
            self._render_rows()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            self._main_table().focus()

    def action_reload(self) -> None:
        self.load()

    def reload_soon(self) -> None:
        """Reload once a burst of changes has settled (the app's debounce), not once per change."""
        if self._reload_timer is not None:
            self._reload_timer.stop()
        self._reload_timer = self.set_timer(self.app.settings.debounce_seconds, self.load)

    def action_cursor_down(self) -> None:
        self._main_table().action_cursor_down()

    def action_cursor_up(self) -> None:
        self._main_table().action_cursor_up()

    def action_cursor_top(self) -> None:
        self._main_table().move_cursor(row=0)

    def action_cursor_bottom(self) -> None:
        self._main_table().move_cursor(row=self._main_table().row_count - 1)

    def _filter_box(self) -> Input | None:
        found = self.query("#filter")
        return found.first(Input) if found else None

    def _filter_text(self) -> str:
        """The filter as typed, lower-cased and stripped ("" when there is no filter box yet)."""
        box = self._filter_box()
        return box.value.strip().lower() if box is not None else ""

    async def action_filter(self) -> None:
        box = self._filter_box()
        if box is None:
            box = Input(placeholder=self.FILTER_PLACEHOLDER, id="filter")
            table = self._main_table()
            await table.parent.mount(box, before=table)
            box.cursor_blink = self.app.settings.cursor_blink
        box.add_class("visible")
        box.focus()

    def action_clear_filter(self) -> None:
        box = self._filter_box()
        if box is not None and (box.value or box.has_class("visible")):
            box.value = ""
            box.remove_class("visible")
            self._main_table().focus()
            self._render_rows()
