"""The Daemon screen (issue 8 item 6): the same instances as `platform daemon ls`, live."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from tests.daemon_fixtures import instances  # noqa: F401
from tests.test_dashboard import SIZE, _until


def test_daemon_screen_shows_running_from_the_lock_and_record_state(instances, demo_project: Path) -> None:  # noqa: F811
    """Spec 2 `daemon ls`: RUNNING from the lock, record state separately; the screen says the
    daemon itself is not in this build, and follows the lock when its holder exits (r reloads)."""
    _root, holder = instances

    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings(refresh_seconds=60))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("5")
            await _until(pilot, lambda: app.current_mode == "daemon" and app.screen.loads >= 1)
            table = app.screen.query_one("#daemon-table")
            assert [k.value for k in table.rows] == ["main", "old", "starting"]
            assert table.get_cell("main", "running") == "RUNNING"
            assert table.get_cell("main", "state") == "awaiting_credentials"
            assert table.get_cell("old", "running") == "-" and "leftover" in table.get_cell("old", "note")
            assert table.get_cell("starting", "state") == "-"
            assert "not in this build" in str(app.screen.query_one("#daemon-note").render())
            assert "platform daemon ls" in str(app.screen.query_one("#daemon-status").render())
            holder.stdin.close()
            holder.wait(10)
            await pilot.press("r")
            await _until(pilot, lambda: app.screen.loads >= 2)
            assert table.get_cell("main", "running") == "-"

    asyncio.run(scenario())


def test_daemon_screen_empty_state(demo_project: Path) -> None:
    """Honest empty state: no instance directories, and the command that lists them."""
    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("5")
            await _until(pilot, lambda: app.current_mode == "daemon" and app.screen.loads >= 1)
            assert app.screen.query_one("#daemon-empty").display
            assert "platform daemon ls" in str(app.screen.query_one("#daemon-status").render())

    asyncio.run(scenario())
