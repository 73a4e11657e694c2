"""Navigation sidebar: the dashboard's screens with their number keys."""

from __future__ import annotations

from textual.widgets import OptionList
from textual.widgets.option_list import Option

from screens.catalog import SCREENS


class Sidebar(OptionList):
    """Lists every screen; selecting one switches to it (same as its number key)."""

    def __init__(self, current: str) -> None:
        super().__init__(*[Option(f"{s.key}  {s.title}", id=s.name) for s in SCREENS], id="sidebar")
        self._current = current

    def on_mount(self) -> None:
        self.highlighted = next(i for i, s in enumerate(SCREENS) if s.name == self._current)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id and event.option.id != self._current:
            self.app.switch_mode(event.option.id)
