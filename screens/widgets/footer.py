"""The dashboard's footer: Textual's Footer, with its keys created in their final style.

Textual (8.2) declares `FooterKey.compact = reactive(True)` and binds it to `Footer.compact` (False):
every key mounts with the `-compact` class, restyles, then loses it and restyles again, so a footer
of six keys costs twelve extra style passes on the first frame (~13 ms, bench/dashboard.py). Here each
key bound to the footer's `compact` starts with the footer's value before it mounts; the binding then
keeps them in step as before. The command palette's key is not bound and keeps its own default.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class DashboardFooter(Footer):
    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey) and "compact" in (widget._reactive_connect or {}):  # bound to ours
                widget.set_reactive(FooterKey.compact, self.compact)
            yield widget
