"""The frame every dashboard screen shares: header, sidebar, body, footer."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from screens.catalog import BY_NAME
from screens.widgets.empty_state import EmptyState
from screens.widgets.footer import DashboardFooter
from screens.widgets.sidebar import Sidebar


class DashboardScreen(Screen[None]):
    """Base of the eight navigable screens. Subclasses fill `compose_body`."""

    NAME: ClassVar[str] = ""
    _resumed = False

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        # Textual (8.2) restyles the whole screen on every resume. A screen's widgets are styled as they
        # mount, just before its first resume, and a change of the stylesheet restyles whatever is mounted
        # (App.refresh_css, Dashboard.read_screens_css): that first restyle styled every widget of the
        # first frame twice (bench/dashboard.py). Runs before Screen's handler (Textual dispatches along
        # the MRO); later resumes restyle as Textual does.
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    def compose(self) -> ComposeResult:
        yield self.header(getattr(self.app, "settings", None) is not None and self.app.settings.show_clock)
        yield Sidebar(self.NAME)
        with Vertical(id="body"):
            yield Static(BY_NAME[self.NAME].title, classes="title")
            yield from self.compose_body()
        yield DashboardFooter()

    def header(self, show_clock: bool) -> Widget:
        """Textual's Header. The first frame's screen (Environments) draws the same line with one widget
        (screens/widgets/title_bar.py); the other screens keep Textual's: a Metrics snapshot
        (tests/test_snapshots_metrics.py) showed a table header's last cell drawn otherwise without it."""
        from textual.widgets import Header

        return Header(show_clock=show_clock)

    def compose_body(self) -> ComposeResult:
        yield from ()


class NotBuiltScreen(DashboardScreen):
    """A view whose engine part does not exist yet: says so and names the commands that will fill it."""

    BINDINGS: ClassVar[list[Binding]] = []
    WHAT: ClassVar[str] = ""
    COMMANDS: ClassVar[tuple[str, ...]] = ()

    def compose_body(self) -> ComposeResult:
        commands = "\n".join(f"  {c}" for c in self.COMMANDS)
        yield EmptyState(
            f"Nothing to show: {self.WHAT} are not part of this build yet.",
            "This view fills from these commands once they land:\n"
            f"{commands}\n\nNo data is invented here. Press : to run any available command.",
            id="empty",
        )
