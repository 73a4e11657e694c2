"""Navigation sidebar: the dashboard's screens with their number keys, as one widget.

It was Textual's OptionList (8.2), which builds a Content, a line cache and strips per option and
styles five component classes: ~25k of the Python calls of the dashboard's first paint
(bench/dashboard.py). This draws the same cells itself, one row a screen (`key  title`), with the
OptionList's styles (its DEFAULT_CSS below, under this widget's name): the highlighted row, the hovered
one, the focused border. Same keys as OptionList's (up/down wrap around; home/end; page up/down stop
at the ends; enter selects), a click selects, the mouse highlights the row it is over, and it scrolls (the
highlighted row kept in view) when the terminal is too short for every row. Rows wider than the
sidebar are cut, not wrapped (the app's CSS gives 18 cells; the longest row is 15).
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size, clamp
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from screens.catalog import SCREENS

ROWS = tuple(f"{s.key}  {s.title}" for s in SCREENS)


class Sidebar(ScrollView, can_focus=True):
    """Lists every screen; selecting one switches to it (same as its number key)."""

    ALLOW_SELECT = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "cursor_down", "Down", show=False, id="sidebar.down"),
        Binding("end", "last", "Last", show=False, id="sidebar.last"),
        Binding("enter", "select", "Select", show=False, id="sidebar.select"),
        Binding("home", "first", "First", show=False, id="sidebar.first"),
        Binding("pagedown", "page_down", "Page Down", show=False, id="sidebar.page_down"),
        Binding("pageup", "page_up", "Page Up", show=False, id="sidebar.page_up"),
        Binding("up", "cursor_up", "Up", show=False, id="sidebar.up"),
    ]
    # Textual's OptionList DEFAULT_CSS (8.2), the rules an option list without separators, disabled
    # options or compact form uses; the two rules it gives the highlighted option merged into one.
    DEFAULT_CSS = """
    Sidebar {
        height: auto;
        max-height: 100%;
        color: $foreground;
        overflow-x: hidden;
        border: tall $border-blurred;
        padding: 0 1;
        background: $surface;
        & > .sidebar--highlighted {
            color: $foreground;
            background: $block-cursor-blurred-background;
            text-style: $block-cursor-blurred-text-style;
        }
        &:focus {
            border: tall $border;
            background-tint: $foreground 5%;
            & > .sidebar--highlighted {
                color: $block-cursor-foreground;
                background: $block-cursor-background;
                text-style: $block-cursor-text-style;
            }
        }
        & > .sidebar--hover {
            background: $block-hover-background;
        }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"sidebar--highlighted", "sidebar--hover"}

    highlighted: reactive[int] = reactive(0)
    hovered: reactive[int | None] = reactive(None)

    def __init__(self, current: str) -> None:
        super().__init__(id="sidebar")
        self._current = current
        # Set without the watcher: there is nothing to scroll or redraw before the first frame.
        self.set_reactive(Sidebar.highlighted, next(i for i, s in enumerate(SCREENS) if s.name == current))
        # The rows are the virtual size: a scroll bar appears (as OptionList's) when they do not fit.
        self.set_reactive(ScrollView.virtual_size, Size(max(len(row) for row in ROWS), len(ROWS)))

    # -- drawing ---------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = self.scroll_offset.y + y
        if not 0 <= index < len(ROWS):
            return Strip.blank(width, self.get_visual_style().rich_style)
        if index == self.highlighted:
            style = self.get_visual_style("sidebar--highlighted")
        elif index == self.hovered:
            style = self.get_visual_style("sidebar--hover")
        else:
            style = self.get_visual_style()
        return Strip([Segment(ROWS[index][:width].ljust(width), style.rich_style)], width)

    def notify_style_update(self) -> None:
        self.refresh()  # focus, hover and theme change the rows' styles, drawn here (as OptionList does)
        super().notify_style_update()

    def watch_highlighted(self) -> None:
        self.scroll_to_highlight()
        self.refresh()

    def watch_hovered(self) -> None:
        self.refresh()

    def on_show(self) -> None:
        self.scroll_to_highlight()

    def scroll_to_highlight(self) -> None:
        if self.is_mounted and self.virtual_size.height > self.scrollable_content_region.height:
            self.scroll_to_region(Region(0, self.highlighted, self.scrollable_content_region.width, 1),
                                  force=True, animate=False, immediate=True)

    # -- keys and mouse --------------------------------------------------------------------
    def action_cursor_up(self) -> None:
        self.highlighted = (self.highlighted - 1) % len(ROWS)

    def action_cursor_down(self) -> None:
        self.highlighted = (self.highlighted + 1) % len(ROWS)

    def action_first(self) -> None:
        self.highlighted = 0

    def action_last(self) -> None:
        self.highlighted = len(ROWS) - 1

    def action_page_up(self) -> None:
        self.highlighted = clamp(self.highlighted - self.scrollable_content_region.height, 0, len(ROWS) - 1)

    def action_page_down(self) -> None:
        self.highlighted = clamp(self.highlighted + self.scrollable_content_region.height, 0, len(ROWS) - 1)

    def action_select(self) -> None:
        name = SCREENS[self.highlighted].name
        if name != self._current:
            self.app.switch_mode(name)

    def _row_at(self, event: events.MouseEvent) -> int | None:
        offset = event.get_content_offset(self)
        if offset is None:
            return None
        index = self.scroll_offset.y + offset.y
        return index if 0 <= index < len(ROWS) else None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hovered = self._row_at(event)

    def on_leave(self) -> None:
        self.hovered = None

    def on_click(self, event: events.Click) -> None:
        index = self._row_at(event)
        if index is not None:
            self.highlighted = index
            self.action_select()
