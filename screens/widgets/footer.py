"""The dashboard's footer: Textual's Footer, with its keys in the first frame, composed again only when
they change, and created in their final style.

Textual's Footer (8.2) composes no keys until the screen first reports its bindings, then composes
them again on every report (each focus change): the first frame showed an empty footer, and the two
reports that follow it (the table focused, the screen refreshed) built the same six keys twice more
before the app was ready (bench/dashboard.py). Here the keys are composed with the footer, from the
screen's bindings as they are then, and a report composes them again only if a key, its label, its
state or its tooltip differs from what is shown.

Textual also declares `FooterKey.compact = reactive(True)` and binds it to `Footer.compact` (False):
every key mounts with the `-compact` class, restyles, then loses it and restyles again. Here each key
bound to the footer's `compact` starts with the footer's value before it mounts; the binding then keeps
them in step as before. The command palette's key is not bound and keeps its own default.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import ComposeResult
from textual.compose import compose
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


def _shown(widgets: Iterable[Widget]) -> list[tuple[Any, ...]]:
    """What a footer's widgets show: each key's key, label, action, state, tooltip and place, in order."""
    return [(type(w).__name__, getattr(w, "key", None), getattr(w, "key_display", None),
             getattr(w, "description", None), getattr(w, "action", None), getattr(w, "_disabled", None),
             w._tooltip if isinstance(w, FooterKey) else str(getattr(w, "_content", "")),
             w.has_class("-command-palette"), w.has_class("-grouped"), _shown(w._nodes))
            for w in widgets]


class DashboardFooter(Footer):
    def compose(self) -> ComposeResult:
        self.set_reactive(Footer._bindings_ready, True)  # the screen's bindings are there to read now
        for widget in super().compose():
            if isinstance(widget, FooterKey) and "compact" in (widget._reactive_connect or {}):  # bound to ours
                widget.set_reactive(FooterKey.compact, self.compact)
            yield widget

    async def recompose(self) -> None:
        if self.is_attached and _shown(compose(self)) != _shown(self._nodes):
            await super().recompose()
