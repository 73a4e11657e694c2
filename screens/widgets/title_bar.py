"""The Environments screen's title bar: the line Textual's Header draws, as one widget.

Textual's Header (8.2) composes three widgets (HeaderIcon, HeaderTitle, HeaderClock or
HeaderClockSpace), each with its own default CSS, styles and compose: ~23k of the ~570k Python calls
of the dashboard's first paint (bench/dashboard.py). This draws the same cells in one widget: the
icon (hover tint, tooltip, a click opens the command palette), `title — sub-title` centred between
it and the clock's place (the clock when shown, updated every second); a click elsewhere toggles the
tall (3 line) form.
"""

from __future__ import annotations

from datetime import datetime

from rich.segment import Segment
from textual import events
from textual.content import Content
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

ICON = "⭘"
ICON_WIDTH = 8  # HeaderIcon: width 8, padding 0 1
CLOCK_WIDTH = 10  # HeaderClock(Space): width 10, padding 0 1
TIME_FORMAT = "%X"


class TitleBar(Widget):
    """The app's title and sub-title (the screen's, when it sets them), as Textual's Header shows them."""

    DEFAULT_CSS = """
    TitleBar {
        dock: top;
        width: 100%;
        background: $panel;
        color: $foreground;
        height: 1;
    }
    TitleBar.-tall {
        height: 3;
    }
    TitleBar > .title-bar--icon-hover {
        background: $foreground 10%;
    }
    TitleBar > .title-bar--clock {
        background: $foreground-darken-1 5%;
        color: $foreground;
        text-opacity: 85%;
    }
    """
    COMPONENT_CLASSES = {"title-bar--icon-hover", "title-bar--clock"}

    icon_hover: reactive[bool] = reactive(False)

    def __init__(self, show_clock: bool = False) -> None:
        super().__init__()
        self.show_clock = show_clock

    def on_mount(self) -> None:
        for node, name in ((self.app, "title"), (self.app, "sub_title"), (self.screen, "title"),
                           (self.screen, "sub_title")):
            self.watch(node, name, lambda: self.refresh(), init=False)
        if self.show_clock:
            self.set_interval(1, callback=self.refresh, name="update header clock")

    @property
    def title_content(self) -> Content:
        """`title — sub-title` as the app formats it (App.format_title), the screen's own first."""
        screen = self.screen
        title = screen.title if screen.title is not None else self.app.title
        sub_title = screen.sub_title if screen.sub_title is not None else self.app.sub_title
        return self.app.format_title(title, sub_title)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        middle = self.size.height // 2
        base = self.rich_style
        icon_style = self.get_component_rich_style("title-bar--icon-hover") if self.icon_hover else base
        icon = Strip([Segment(f" {ICON}".ljust(ICON_WIDTH) if y == middle else " " * ICON_WIDTH, icon_style)])
        if self.show_clock:
            text = datetime.now().time().strftime(TIME_FORMAT) if y == middle else ""
            clock = Strip([Segment(text.center(CLOCK_WIDTH), self.get_component_rich_style("title-bar--clock"))])
        else:
            clock = Strip([Segment(" " * CLOCK_WIDTH, base)])
        title_width = width - ICON_WIDTH - CLOCK_WIDTH
        if title_width < 0:  # the clock's place is drawn over the icon's, as Header's docks are
            clock_x = width - CLOCK_WIDTH
            return Strip.join([icon.crop(0, max(0, clock_x)), clock.crop(max(0, -clock_x))])
        segments = [Segment(" " * title_width, base)]
        if y == 0 and title_width:
            line = self.title_content.truncate(title_width, ellipsis=True)
            pad = title_width - line.cell_length
            segments = [Segment(" " * (pad // 2), base), *line.render_segments(self.get_visual_style()),
                        Segment(" " * (pad - pad // 2), base)]
        return Strip.join([icon, Strip(segments), clock])

    def watch_icon_hover(self) -> None:
        self.tooltip = "Open the command palette" if self.icon_hover and self.app.ENABLE_COMMAND_PALETTE else None
        self.refresh()

    def _icon_at(self, x: int) -> bool:
        return 0 <= x < ICON_WIDTH

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.icon_hover = self._icon_at(event.x)

    def on_leave(self) -> None:
        self.icon_hover = False

    async def on_click(self, event: events.Click) -> None:
        event.stop()
        if self._icon_at(event.x):
            if self.app.ENABLE_COMMAND_PALETTE:
                await self.run_action("app.command_palette")
        else:
            self.toggle_class("-tall")
