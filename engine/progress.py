"""Progress of long work: the engine reports steps, the app renders them (docs/architecture.md).

The engine never imports rich or textual: a long operation (a build's workloads, a push's artifacts,
`db migrate up`'s files, `db seed apply`'s tables) takes an optional `Reporter` and calls it with a
`Step` as it goes. app/progress.py renders steps as rich progress bars on a terminal, nothing in
`--json` and non-terminal runs, and one event line per step for the dashboard's command view.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Step:
    """One moment of a task: `done` of `total` units finished, `item` the unit under way (or just
    finished when done == total). `total` is None when the work cannot count its units."""

    task: str
    done: int
    total: int | None
    item: str = ""


Reporter = Callable[[Step], None]


def tracked(report: Reporter | None, task: str, items: Iterable[T], label: Callable[[T], str] = str) -> Iterator[T]:
    """Yield `items`, reporting each one as under way before it is handed out and the task's end after
    the last one; without a reporter, or with nothing to do, it is the plain iteration (no empty bar)."""
    units = list(items)
    if report is None or not units:
        yield from units
        return
    for done, unit in enumerate(units):
        report(Step(task, done, len(units), label(unit)))
        yield unit
    report(Step(task, len(units), len(units), ""))
