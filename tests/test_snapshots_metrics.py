"""Snapshots of the Metrics screen (key 0) and of the Environments screen's Delivery panel
(docs/reference-metrics.md#in-the-dashboard), over a ledger built with known times (tests/metrics_fixtures.py).

Regenerate on purpose with `--snapshot-update` and look at the SVG text before committing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from metrics_fixtures import SINCE, UNTIL, build_known_ledger, recent_shift

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from engine.project import find_project
from screens.environments.metrics import MetricsScreen
from tests.waiting import until_app

SIZE = (130, 32)


def _metrics_screen(*keys: str) -> Any:
    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1, what="the environments")
        screen = MetricsScreen(since=SINCE, until=UNTIL)
        await app.push_screen(screen)
        await until_app(pilot, lambda: screen.loads >= 1, what="the metrics")
        await pilot.press("j")  # prod: the environment with every kind of failure
        await until_app(pilot, lambda: screen.selected == "prod", what="prod highlighted")
        await pilot.press(*keys)
        await app.workers.wait_for_complete()
        await pilot.pause()

    return run_before


def test_metrics_screen_pictures_layout(snap_compare: Any, demo_project: Path) -> None:
    """docs/reference-metrics.md#in-the-dashboard: the four measures per environment and prod's
    sparklines over a pinned week."""
    build_known_ledger(find_project(demo_project).key)
    app = Dashboard(project_dir=demo_project, settings=deterministic_settings(show_volatile=False))
    assert snap_compare(app, terminal_size=SIZE, run_before=_metrics_screen())


def test_metrics_screen_table_layout(snap_compare: Any, demo_project: Path) -> None:
    """docs/reference-metrics.md#in-the-dashboard: `t`, the table behind the pictures (one row per day)."""
    build_known_ledger(find_project(demo_project).key)
    app = Dashboard(project_dir=demo_project, settings=deterministic_settings(show_volatile=False))
    assert snap_compare(app, terminal_size=SIZE, run_before=_metrics_screen("t"))


def test_environments_delivery_panel_layout(snap_compare: Any, demo_project: Path) -> None:
    """docs/reference-metrics.md#in-the-dashboard: the Delivery panel under the environments, the known
    ledger moved to the last days (the panel shows no dates or clocks, so the picture is stable)."""
    build_known_ledger(find_project(demo_project).key, recent_shift(time.time()))

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1, what="the environments")
        panel = app.screen.query_one("#delivery")
        await until_app(pilot, lambda: panel.metrics is not None and len(panel.query(".delivery-row")) == 2,
                        what="the delivery panel's two rows")
        await app.workers.wait_for_complete()
        await pilot.pause()

    app = Dashboard(project_dir=demo_project, settings=deterministic_settings(show_volatile=False))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
