"""Plans screen. Its engine part is not built yet: an honest empty state naming what fills it."""

from __future__ import annotations

from screens.base import NotBuiltScreen


class PlansScreen(NotBuiltScreen):
    NAME = "plans"
    WHAT = "deploy plans (images with both digests, direction, commits between releases)"
    COMMANDS = ('framework env deploy <env> <version> --plan',)
