"""Debug screen. Its engine part is not built yet: an honest empty state naming what fills it."""

from __future__ import annotations

from screens.base import NotBuiltScreen


class DebugScreen(NotBuiltScreen):
    NAME = "debug"
    WHAT = "debugging sessions"
    COMMANDS = ('framework debug start <service or path>',)
