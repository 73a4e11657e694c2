"""The dashboard's screens in navigation order, with their number keys. No Textual imports here."""

from __future__ import annotations

from typing import NamedTuple


class ScreenInfo(NamedTuple):
    name: str
    title: str
    key: str
    module: str
    cls: str


SCREENS: tuple[ScreenInfo, ...] = (
    ScreenInfo("environments", "Environments", "1", "screens.environments.listing", "EnvironmentsScreen"),
    ScreenInfo("rollouts", "Rollouts", "2", "screens.deploys.rollouts", "RolloutsScreen"),
    ScreenInfo("plans", "Plans", "3", "screens.deploys.plans", "PlansScreen"),
    ScreenInfo("devstacks", "Dev stacks", "4", "screens.devstacks.listing", "DevStacksScreen"),
    ScreenInfo("daemon", "Daemon", "5", "screens.daemon", "DaemonScreen"),
    ScreenInfo("webhooks", "Webhooks", "6", "screens.webhooks.listing", "WebhooksScreen"),
    ScreenInfo("runs", "Runs", "7", "screens.runs", "RunsScreen"),
    ScreenInfo("debug", "Debug", "8", "screens.debug.screen", "DebugScreen"),
    ScreenInfo("domains", "Domains", "9", "screens.environments.domains", "DomainsScreen"),
    ScreenInfo("metrics", "Metrics", "0", "screens.environments.metrics", "MetricsScreen"),
    ScreenInfo("lint", "Lint", "L", "screens.lint", "LintScreen"),
    ScreenInfo("project", "Project", "P", "screens.project.screen", "ProjectScreen"),
)

BY_NAME = {s.name: s for s in SCREENS}
