"""The Daemon screen (docs/reference-daemon.md#platform-daemon): the same instances as `platform daemon ls`,
live."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from tests.daemon_fixtures import instances  # noqa: F401
from tests.test_dashboard import SIZE
from tests.waiting import until_app


def test_daemon_screen_shows_running_from_the_lock_and_record_state(instances, demo_project: Path) -> None:  # noqa: F811
    """`daemon ls` (docs/reference-daemon.md#platform-daemon): RUNNING from the lock, record state separately;
    the actions show their command lines, and the screen follows the lock when its holder exits (r
    reloads)."""
    _root, holder = instances

    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings(refresh_seconds=60))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("5")
            await until_app(pilot, lambda: app.current_mode == "daemon" and app.screen.loads >= 1)
            table = app.screen.query_one("#daemon-table")
            assert [k.value for k in table.rows] == ["main", "old", "starting"]
            assert table.get_cell("main", "running") == "RUNNING"
            assert table.get_cell("main", "state") == "awaiting_credentials"
            assert table.get_cell("old", "running") == "-" and "leftover" in table.get_cell("old", "note")
            assert table.get_cell("starting", "state") == "-"
            assert "x stop: platform daemon stop --name main" in str(app.screen.query_one("#daemon-actions").render())
            assert "platform daemon ls" in str(app.screen.query_one("#daemon-status").render())
            holder.stdin.close()
            holder.wait(10)
            await pilot.press("r")
            await until_app(pilot, lambda: app.screen.loads >= 2)
            assert table.get_cell("main", "running") == "-"

    asyncio.run(scenario())


def test_daemon_screen_empty_state(demo_project: Path) -> None:
    """Honest empty state: no instance directories, and the command that lists them."""
    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("5")
            await until_app(pilot, lambda: app.current_mode == "daemon" and app.screen.loads >= 1)
            assert app.screen.query_one("#daemon-empty").display
            assert "platform daemon ls" in str(app.screen.query_one("#daemon-status").render())

    asyncio.run(scenario())


def test_daemon_screen_stream_sessions_log_and_stop_action(instances, demo_project: Path) -> None:  # noqa: F811
    """docs/reference-daemon.md#platform-daemon (`daemon ls` on the Daemon screen): the stream state
    (connected since, last heartbeat, server) and the active sessions from the runtime record, the selected
    instance's log tail, and `x` runs `platform daemon stop --name <instance>` for real: the lock holder is
    stopped and RUNNING goes."""
    import json

    root, holder = instances
    now = time.time()
    (root / "main" / "runtime.json").write_text(json.dumps({
        "state": "connected", "pid": holder.pid, "stream": {"connected": True, "since": now - 60,
                                                            "last_heartbeat": now, "server": "n1@http://srv:8080"},
        "sessions": {"shell": 2, "pty": 1}}))
    (root / "main" / "daemon.log").write_text("".join(f"line {i}\n" for i in range(20)))

    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings(refresh_seconds=60))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("5")
            await until_app(pilot, lambda: app.current_mode == "daemon" and app.screen.loads >= 1)
            table = app.screen.query_one("#daemon-table")
            assert table.get_cell("main", "stream").startswith("connected since") and "srv:8080" in table.get_cell(
                "main", "stream")
            assert table.get_cell("main", "sessions") == "pty 1, shell 2"
            log = str(app.screen.query_one("#daemon-log").render())
            assert "line 19" in log and "line 11" not in log  # the last 8 lines
            await pilot.press("x")
            await until_app(pilot, lambda: "exit 0" in app.screen.last_action, timeout=30)
            await until_app(pilot, lambda: app.screen.loads >= 2 and table.get_cell("main", "running") == "-")
            assert holder.wait(10) != 0
            assert "platform daemon stop --name main: exit 0" in str(app.screen.query_one("#daemon-status").render())

    asyncio.run(scenario())
