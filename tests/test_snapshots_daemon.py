"""Snapshot of the Daemon screen over real instance directories (one locked by a live child
process holding flock, one leftover record, one running without record); docs/reference-daemon.md#platform-daemon."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from tests.daemon_fixtures import instances  # noqa: F401


def test_daemon_screen_layout(snap_compare: Any, instances: Any, demo_project: Path) -> None:  # noqa: F811
    """`daemon ls` (docs/reference-daemon.md#platform-daemon): RUNNING from the lock, the record's state
    reported separately."""

    async def run_before(pilot: Any) -> None:
        from tests.waiting import until_app

        await pilot.press("5")
        await until_app(pilot, lambda: pilot.app.current_mode == "daemon" and pilot.app.screen.loads >= 1)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    app = Dashboard(project_dir=demo_project, settings=deterministic_settings(refresh_seconds=3600))
    assert snap_compare(app, terminal_size=(120, 32), run_before=run_before)
