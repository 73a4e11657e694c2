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
        return same and not any(t._require_update_dimensions or t._updated_cells for t in screen.query("DataTable"))

    await until_app(pilot, settled, timeout=timeout, interval=0.02, what="the layout to settle")
