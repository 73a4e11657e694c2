"""Webhooks screen. Its engine part is not built yet: an honest empty state naming what fills it."""

from __future__ import annotations

from screens.base import NotBuiltScreen


class WebhooksScreen(NotBuiltScreen):
    NAME = "webhooks"
    WHAT = "automations, webhook triggers and delivery history"
    COMMANDS = ('platform server (the hosted side that records deliveries)',)
