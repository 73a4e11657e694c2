"""Progress of long headless work (README.md#progress-and-shell-completion), rendered from the engine's
steps (engine/progress.py).

- On a terminal (stderr is a TTY): rich progress bars on stderr, one per task (build, push, upload,
  migrate, seed), the work's own messages printed above them; the bars live while a task counts.
- With `--json`, or when stderr is not a terminal (a pipe, a file, CI): nothing at all.
- Under the dashboard's command view (`FRAMEWORK_PROGRESS_EVENTS=1` in the child's environment): one
  event line per step on stderr, `EVENT_PREFIX` then a JSON object, which the view turns into its
  progress bar and never shows as text.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.progress import Reporter, Step

EVENTS_ENV = "FRAMEWORK_PROGRESS_EVENTS"
EVENT_PREFIX = "\x1eprogress "  # a record separator first: no line of human output starts with it


@dataclass
class Sink:
    """Where a command's long work reports: `step` takes engine Steps, `say` one message line; both
    None when the run is silent (the engine then skips the reporting altogether)."""

    step: Reporter | None = None
    say: Callable[[str], None] | None = None


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _event(doc: dict[str, Any]) -> None:
    sys.stderr.write(EVENT_PREFIX + json.dumps(doc, separators=(",", ":")) + "\n")
    sys.stderr.flush()


def parse_event(line: str) -> dict[str, Any] | None:
    """The event of one stderr line of a child run under the dashboard, or None for an ordinary line."""
    if not line.startswith(EVENT_PREFIX):
        return None
    try:
        doc = json.loads(line[len(EVENT_PREFIX):])
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


@contextmanager
def sink(json_mode: bool) -> Iterator[Sink]:
    """The Sink of one command run: bars on a terminal, events under the dashboard, silence otherwise."""
    if os.environ.get(EVENTS_ENV) == "1":
        yield Sink(step=lambda s: _event({"progress": asdict(s)}), say=lambda m: _event({"message": m}))
        return
    if json_mode or not _isatty(sys.stderr):
        yield Sink()
        return
    state: dict[str, Any] = {"bars": None, "tasks": {}}

    def step(s: Step) -> None:
        # The bars live only while a task counts: started by its first step and stopped when every task
        # shown reached its total, so prompts and messages between tasks print as plain lines.
        bars = state["bars"]
        if bars is None:
            bars = state["bars"] = _bars()
            bars.start()
        tasks = state["tasks"]
        if s.task not in tasks:
            tasks[s.task] = bars.add_task(s.task, total=s.total, item=s.item)
        bars.update(tasks[s.task], completed=s.done, total=s.total, item=s.item)
        if all(task.finished for task in bars.tasks):
            bars.stop()
            state["bars"], state["tasks"] = None, {}

    def say(message: str) -> None:
        if state["bars"] is not None:
            state["bars"].console.print(f"[cyan]>[/] {_escape(message)}")
        else:
            from app.output import progress

            progress(message)

    try:
        yield Sink(step=step, say=say)
    finally:
        if state["bars"] is not None:
            state["bars"].stop()


def _bars() -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from app.output import stderr_console

    return Progress(TextColumn("{task.description:>8}"), BarColumn(bar_width=30), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("{task.fields[item]}", markup=False),
                    console=stderr_console(), redirect_stdout=False, transient=False)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
