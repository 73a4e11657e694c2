"""One service's log: the tail of its log file, live-following while open (`f` toggles follow).

Same file `framework env ps` names in its LOG column; the equivalent command is `tail -f <log>`.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Log, Static

TAIL_BYTES = 64 * 1024  # the first paint reads at most this much of the file's end
MAX_LINES = 2000
POLL_SECONDS = 0.25  # a log has no event of its own worth a watcher; a stat per tick is cheap


class ServiceLogScreen(Screen[None]):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "app.pop_screen", "Back", id="devstack_logs.back"),
        Binding("f", "toggle_follow", "Follow", id="devstack_logs.follow"),
        Binding("g", "top", "Top", id="devstack_logs.top", show=False),
        Binding("G", "bottom", "Bottom", id="devstack_logs.bottom", show=False),
    ]

    def __init__(self, service: str, path: Path) -> None:
        super().__init__()
        self.service = service
        self.log_path = path
        self.follow = True
        self.read_offset = 0
        self._partial = ""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=self.app.settings.show_clock)
        with Vertical(id="body"):
            yield Static(f"Log of {self.service}", classes="title", markup=False)
            yield Static("", id="log-status", classes="status-line", markup=False)
            yield Log(id="service-log", max_lines=MAX_LINES, auto_scroll=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#service-log").focus()
        self._read(first=True)
        self._status()
        self.set_interval(POLL_SECONDS, self._poll)

    def _status(self) -> None:
        mode = "following" if self.follow else "paused (f follows)"
        self.query_one("#log-status", Static).update(f"{mode}   (same as: tail -f {self.log_path})")

    def _poll(self) -> None:
        if self.follow:
            self._read()

    def _read(self, first: bool = False) -> None:
        try:
            size = self.log_path.stat().st_size
            if size < self.read_offset:  # truncated or replaced (a restart): start over
                self.read_offset, self._partial = 0, ""
            if first and size > TAIL_BYTES:
                self.read_offset = size - TAIL_BYTES
            with self.log_path.open("rb") as fh:
                fh.seek(self.read_offset)
                data = fh.read()
        except OSError as exc:
            if first:
                self.query_one("#service-log", Log).write_line(f"cannot read {self.log_path}: {exc.strerror}")
            return
        self.read_offset += len(data)
        text = self._partial + data.decode(errors="replace")
        lines = text.split("\n")
        self._partial = lines.pop()  # an unfinished last line waits for its newline
        if first and self.read_offset > len(data) and lines:
            lines = lines[1:]  # the first line of a mid-file tail is cut
        if lines:
            self.query_one("#service-log", Log).write_lines(lines)

    def action_toggle_follow(self) -> None:
        self.follow = not self.follow
        log = self.query_one("#service-log", Log)
        log.auto_scroll = self.follow
        if self.follow:
            self._read()
            log.scroll_end(animate=False)
        self._status()

    def action_top(self) -> None:
        self.query_one("#service-log", Log).scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.query_one("#service-log", Log).scroll_end(animate=False)
