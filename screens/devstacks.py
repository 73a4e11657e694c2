"""Dev stacks screen. Its engine part is not built yet: an honest empty state naming what fills it."""

from __future__ import annotations

from screens.base import NotBuiltScreen


class DevStacksScreen(NotBuiltScreen):
    NAME = "devstacks"
    WHAT = "local dev stacks and their port blocks"
    COMMANDS = ('framework env up <env>', 'framework env ps', 'framework env devstack list',)
