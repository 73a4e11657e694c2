"""Rollouts screen. Its engine part is not built yet: an honest empty state naming what fills it."""

from __future__ import annotations

from screens.base import NotBuiltScreen


class RolloutsScreen(NotBuiltScreen):
    NAME = "rollouts"
    WHAT = "in-flight rollouts (phase per workload, health, wait budget)"
    COMMANDS = ('framework env deploy <env>', 'framework env status <env> --wait',)
