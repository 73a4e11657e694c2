"""Keyboard habits shared by screens built around one table: j/k/g/G, `/` filter, esc clears it.

A screen mixes in `TableKeys`, names its table in `_main_table()`, re-renders in `_render_rows()`
and adds `table_bindings("<screen id>")` to its BINDINGS (every binding has an id).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
    # Provided by the screen that mixes this in (declared here for readers and type checkers).
    query_one: Any
    _main_table: Callable[[], DataTable[str]]
    _render_rows: Callable[[], None]

    def action_cursor_down(self) -> None:
        self._main_table().action_cursor_down()

    def action_cursor_up(self) -> None:
        self._main_table().action_cursor_up()

    def action_cursor_top(self) -> None:
        self._main_table().move_cursor(row=0)

    def action_cursor_bottom(self) -> None:
        self._main_table().move_cursor(row=self._main_table().row_count - 1)

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("visible")
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if box.value or box.has_class("visible"):
            box.value = ""
            box.remove_class("visible")
            self._main_table().focus()
            self._render_rows()
