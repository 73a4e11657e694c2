"""Runs screen. Its engine part is not built yet: an honest empty state naming what fills it."""

from __future__ import annotations

from screens.base import NotBuiltScreen


class RunsScreen(NotBuiltScreen):
    NAME = "runs"
    WHAT = "workflow runs (each tool call and result, plan and tasks)"
    COMMANDS = ('platform run <workflow>',)
