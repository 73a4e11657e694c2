"""The tests' one way to wait: poll for the outcome a test means (a process exit, a file, a state a
screen or a server reports), with a deadline, never a fixed sleep followed by an assertion.

    from tests.waiting import until            # in a plain test
    value = until(lambda: server.state() == "up" or None, timeout=30, what="the server to be up")

    from tests.waiting import until_app        # in a Textual pilot test
    await until_app(pilot, lambda: app.screen.loads >= 1, what="the first load")

`check` returns something truthy when the wait is over (that value is returned), anything falsy to
keep waiting; an exception it raises ends the wait at once (a process that died while we waited for it
to come up is a failure now, not at the deadline). `what` names the event for the failure message; a
callable is called then (a screen's text at the deadline, say).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
INTERVAL = 0.05


class _Deadline:
    def __init__(self, timeout: float, what: str | Callable[[], str]) -> None:
        self.timeout, self.what = timeout, what
        self.end = time.monotonic() + timeout

    def passed(self) -> bool:
        return time.monotonic() > self.end

    def fail(self) -> AssertionError:
        what = self.what() if callable(self.what) else self.what
        return AssertionError(f"timed out after {self.timeout:g}s waiting for {what}")


def until(check: Callable[[], T], timeout: float = 30.0, what: str | Callable[[], str] = "the condition",
          interval: float = INTERVAL) -> T:
    """Poll `check` until it answers something truthy and return that; fail after `timeout` seconds.
    It is always asked once more after the deadline, so a slow machine fails only on a real miss."""
    deadline = _Deadline(timeout, what)
    while True:
        late = deadline.passed()
        value = check()
        if value:
            return value
        if late:
            raise deadline.fail()
        time.sleep(interval)


async def until_app(pilot: Any, check: Callable[[], T], timeout: float = 60.0,
                    what: str | Callable[[], str] = "the condition", interval: float = INTERVAL) -> T:
    """`until` for a Textual app under a pilot: between polls the app runs (pilot.pause), not a sleep."""
    deadline = _Deadline(timeout, what)
    while True:
        late = deadline.passed()
        value = check()
        if value:
            return value
        if late:
            raise deadline.fail()
        pause: Awaitable[None] = pilot.pause(interval)
        await pause


async def settle_layout(pilot: Any, timeout: float = 4.0) -> None:
    """Before a snapshot: wait until the layout stops moving (every widget's region unchanged across two
    polls) and every DataTable has measured its rows. A DataTable sizes its columns to new rows only
    when its message queue is empty (its idle handler), which the regions do not show: a snapshot taken
    before that has every column at its header's width (seen in a fresh-clone run under load). Every
    snapshot test gets it through the `snap_compare` fixture (tests/conftest.py), after its own waits."""
    screen = pilot.app.screen
    last: list[list[Any]] = []  # the regions the previous poll saw

    def settled() -> bool:
        regions = [(w.id, tuple(w.region)) for w in screen.query("*")]
        same = last == [regions]
        last[:] = [regions]
        tables = list(screen.query("DataTable"))
        if not same or any(t._require_update_dimensions or t._updated_cells for t in tables):
            return False
        short = [t for t in tables if _narrower_than_a_cell(t)]
        for table in short:  # measured by nothing pending: have it measure its rows again (see below)
            table._new_rows.update(table.rows)
            table._require_update_dimensions = True
            table.check_idle()
        return not short

    await until_app(pilot, settled, timeout=timeout, interval=0.02, what="the layout to settle")


def _narrower_than_a_cell(table: Any) -> bool:
    """Whether an auto-width column of `table` is narrower than one of its cells as the table itself
    measures a cell (textual's DataTable._update_column_widths). Once the table has measured its rows
    that cannot be; a fresh-clone run under the whole suite's load once took a snapshot with every
    column at its header's width and no update pending (tests/test_snapshots_webhooks.py, history;
    how it got there was not found), so `settle_layout` checks the widths themselves and has the table
    measure its rows again when they are short."""
    from textual.render import measure
    from textual.widgets._data_table import default_cell_formatter

    console = table.app.console
    columns = [(key, column) for key, column in table.columns.items() if column.auto_width]
    for row_key, row in table.rows.items():
        if row.auto_height:  # measured with its rendering, not here
            continue
        cells = table._data.get(row_key, {})
        for key, column in columns:
            shown = default_cell_formatter(cells.get(key), wrap=row.height != 1, height=row.height)
            if measure(console, shown, 1) > column.content_width:
                return True
    return False
