"""The Metrics screen (key 0) and the Environments screen's Delivery panel
(docs/reference-metrics.md#in-the-dashboard): the same numbers as `framework ledger metrics`, pictures
with the table behind them one key away, on a ledger built with known times."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from metrics_fixtures import SINCE, UNTIL, build_known_ledger, recent_shift

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from engine.ledger.metrics import machine_metrics
from engine.ledger.store import Ledger
from engine.project import find_project
from screens.environments.metrics import MetricsScreen
from tests.waiting import until_app

SIZE = (130, 40)


def _engine(project: str, since: float, until: float, bucket: str = "day"):
    with Ledger.open(project) as ledger:
        return {e.env: e for e in machine_metrics(ledger.conn, project, "", None, since, until, bucket).environments}


def test_metrics_screen_shows_the_commands_numbers_and_the_table_behind_each_picture(demo_project: Path) -> None:
    """docs/reference-metrics.md#in-the-dashboard: one row per environment with the four measures, the
    highlighted environment's series as sparklines, `t` the table of the same buckets, `w` weeks."""
    key = find_project(demo_project).key
    build_known_ledger(key)
    expected = _engine(key, SINCE, UNTIL)

    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1, what="the environments")
            screen = MetricsScreen(since=SINCE, until=UNTIL)
            await app.push_screen(screen)
            await until_app(pilot, lambda: screen.loads >= 1, what="the metrics")
            envs = screen.query_one("#metrics-envs")
            assert [k.value for k in envs.rows] == ["dev", "prod"]
            assert envs.get_row("prod")[1:6] == ["5", "0.71", "1.8h", "2.1d", "43% (3/7)"]
            assert screen.query_one("#spark-deploys").data == [1.0] + [0.0] * 6  # dev, highlighted first
            await pilot.press("j")
            await until_app(pilot, lambda: screen.selected == "prod", what="prod highlighted")
            assert screen.query_one("#spark-deploys").data == [float(b.deploys) for b in expected["prod"].series]
            assert screen.query_one("#spark-change_failure_rate").data == [0.0, 0.5, 0.5, 0.0, 1.0, 0.0, 0.0]
            await pilot.press("t")
            series = screen.query_one("#metrics-series")
            assert series.display and not any(p.display for p in screen.query(".metrics-picture"))
            assert [series.get_row(k)[1] for k in [r.value for r in series.rows]] == ["1", "1", "2", "1", "0", "0", "0"]
            await pilot.press("w")
            await until_app(pilot, lambda: screen.loads >= 2, what="the weekly reload")
            assert [r.value for r in series.rows] == ["2026-11-02T00:00:00Z"]
            assert series.get_row("2026-11-02T00:00:00Z")[1:6] == ["5", "1.8h", "7", "3", "43%"]

    asyncio.run(scenario())


def test_delivery_panel_pictures_each_environment_and_hides_without_promotions(demo_project: Path) -> None:
    """docs/reference-metrics.md#in-the-dashboard: the Environments screen's Delivery panel draws deploys
    and lead time per day of the last 14 days per environment; with no promotion it is not shown."""
    async def panel_rows() -> tuple[bool, dict[str, list[float]]]:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            panel = app.screen.query_one("#delivery")
            def drawn() -> bool:  # the read landed and every row it mounted has drawn its data
                return panel.metrics is not None and all(
                    row.query(".delivery-deploys") and row.query_one(".delivery-deploys").data
                    for row in panel.query(".delivery-row"))

            await until_app(pilot, drawn, what="the delivery panel's rows drawn")
            rows = {row.env: row.query_one(".delivery-deploys").data for row in panel.query(".delivery-row")}
            return panel.display, rows

    shown, rows = asyncio.run(panel_rows())
    assert not shown and rows == {}
    key = find_project(demo_project).key
    now = time.time()
    build_known_ledger(key, recent_shift(now))
    shown, rows = asyncio.run(panel_rows())
    assert shown and sorted(rows) == ["dev", "prod"]
    assert len(rows["prod"]) in (14, 15)  # 14 days back from now: 15 day buckets unless now is 00:00 UTC
    assert sum(rows["prod"]) == 5 and sum(rows["dev"]) == 1


def test_metrics_screen_says_so_when_the_ledger_has_no_promotions(demo_project: Path) -> None:
    """docs/reference-metrics.md#in-the-dashboard: with no promotion the screen shows an empty state that
    names the command that fills it (nothing invented), and no table or pictures."""
    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("0")
            await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1, what="the metrics")
            screen = app.screen
            assert isinstance(screen, MetricsScreen)
            empty = screen.query_one("#metrics-empty")
            assert empty.display and not screen.query_one("#metrics-envs").display
            assert not screen.query_one("#metrics-pictures").display
            text = " ".join(str(w.render()) for w in empty.query("Static"))
            assert "No promotions in the ledger" in text and "framework env deploy <env>" in text

    asyncio.run(scenario())
