"""Daemon screen. Its engine part is not built yet: an honest empty state naming what fills it."""

from __future__ import annotations

from screens.base import NotBuiltScreen


class DaemonScreen(NotBuiltScreen):
    NAME = "daemon"
    WHAT = "local tools-daemon instances"
    COMMANDS = ('platform daemon ls', 'platform daemon status',)
