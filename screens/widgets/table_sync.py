"""Keyed DataTable refresh: update changed cells, add new rows, drop stale ones; never clear().

Clearing on every refresh would lose the cursor and scroll position (STYLE: dolphie's Processlist).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.cells import cell_len


def sync_rows(table: Any, columns: Sequence[str], rows: Mapping[str, Sequence[Any]]) -> None:
    """Make `table` show exactly `rows` (row key -> cells, in `columns` order), in the given order for new rows."""
    for key in [k.value for k in list(table.rows)]:
        if key not in rows:
            table.remove_row(key)
    existing = {k.value for k in table.rows}
    for key, cells in rows.items():
        if key in existing:
            for column, value in zip(columns, cells, strict=True):
                if table.get_cell(key, column) != value:
                    table.update_cell(key, column, value, update_width=True)
        else:
            table.add_row(*cells, key=key)
            # The widths now, not at the table's next idle: a frame drawn before that idle caches the header
            # row at the old widths, and Textual keeps that line when the widths grow (a header one cell
            # short of its column, seen in tests/test_snapshots_metrics.py under load).
            for column, value in zip(columns, cells, strict=True):
                text = value.plain if hasattr(value, "plain") else str(value)
                if "\n" not in text:
                    col = table.columns[column]
                    col.content_width = max(col.content_width, cell_len(text))
