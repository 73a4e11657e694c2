"""The dashboard's footer: Textual's Footer, with its keys in the first frame, composed again only when
they change, and created in their final style.

Textual's Footer (8.2) composes no keys until the screen first reports its bindings, then composes
them again on every report (each focus change): the first frame showed an empty footer, and the two
reports that follow it (the table focused, the screen refreshed) built the same six keys twice more
before the app was ready (bench/dashboard.py). Here the keys are composed with the footer, from the
screen's bindings as they are then, and a report composes them again only if a shown binding, its key's
label, its state or its tooltip differs from those the keys were composed from.

Textual also declares `FooterKey.compact = reactive(True)` and binds it to `Footer.compact` (False):
every key mounts with the `-compact` class, restyles, then loses it and restyles again. Here each key
bound to the footer's `compact` starts with the footer's value before it mounts; the binding then keeps
them in step as before. The command palette's key is not bound and keeps its own default.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class DashboardFooter(Footer):
    _composed_from: tuple[Any, ...] = ()

    def _shown(self) -> tuple[Any, ...]:
        """What Footer.compose reads: the bindings it shows (and the command palette's) with their state."""
        app = self.app
        return (self.show_command_palette and app.ENABLE_COMMAND_PALETTE,
                tuple((key, binding, app.get_key_display(binding), enabled, tooltip)
                      for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
                      if binding.show or key == app.COMMAND_PALETTE_BINDING))

    def compose(self) -> ComposeResult:
        self.set_reactive(Footer._bindings_ready, True)  # the screen's bindings are there to read now
        self._composed_from = self._shown()
        for widget in super().compose():
            if isinstance(widget, FooterKey) and "compact" in (widget._reactive_connect or {}):  # bound to ours
                widget.set_reactive(FooterKey.compact, self.compact)
            yield widget

    async def recompose(self) -> None:
        if self.is_attached and self._shown() != self._composed_from:
            await super().recompose()
