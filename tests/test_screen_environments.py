"""Environments screen and detail (README.md, Dashboard: key 1) on a real demo copy with real deploys.

The rows carry the same data as `framework env status <env> --json`; the detail pages the promotion
history with the ledger's cursor (`next_before`); the list refreshes when the ledger changes.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture  # noqa: E402,F401
from screen_fixtures import SIZE, two_releases  # noqa: E402

from app.dashboard import Dashboard  # noqa: E402
from app.settings import deterministic_settings  # noqa: E402
from tests.waiting import until_app

NO_WAIT = ("--yes", "--no-wait")


async def reload_until(pilot, screen, predicate, attempts: int = 20) -> None:  # type: ignore[no-untyped-def]
    """Press `r` and wait for each reload until `predicate()` holds (a bounded number of reloads)."""
    for _ in range(attempts):
        if predicate():
            return
        loads = screen.loads
        await pilot.press("r")
        await until_app(pilot, lambda loads=loads: screen.loads > loads)
    assert predicate()


def test_rows_match_env_status_and_refresh_when_the_ledger_changes(demo) -> None:  # type: ignore[no-untyped-def]
    """`env status` (docs/reference-deploy.md#commands: bound release, rollout phase, verify per image,
    health, ledger age) in the table; a deploy by the CLI (ledger change) refreshes the row through watchdog
    without moving the cursor."""
    two_releases(demo)
    demo.run("env", "deploy", "dev", "v1", "--yes", "--stability-window", "0.3", check=True)

    async def scenario() -> None:
        app = Dashboard(project_dir=demo.root, settings=deterministic_settings(watch=True, debounce_seconds=0.05))
        async with app.run_test(size=SIZE) as pilot:
            await until_app(pilot, lambda: app.screen.loads >= 1)
            table = app.screen.query_one("#env-table")
            _code, doc = demo.json("env", "status", "dev")
            st = doc["environments"][0]
            # health is a live probe: on a loaded machine one probe may miss, so reload (r) until it answers
            await reload_until(pilot, app.screen, lambda: table.get_row("dev")[6] == "healthy")
            row = table.get_row("dev")
            assert row[3] == st["release"] == "v1"
            assert row[4] == "ready" and row[5] == "2 match"
            assert row[7].endswith("ago") and row[8] == "converged"
            assert table.get_row("staging")[8] == "unbound"
            table.move_cursor(row=2)
            demo.run("env", "deploy", "dev", "v2", "--yes", "--stability-window", "0.3", check=True)
            await until_app(pilot, lambda: table.get_row("dev")[3] == "v2")
            assert table.cursor_row == 2

    asyncio.run(scenario())


def test_detail_pages_history_with_the_ledger_cursor(demo, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """`env status --history --limit --before` (docs/reference-deploy.md#commands): the detail shows per-image
    verify state and per-workload phase, and `n`/`p` walk the promotion history pages by `next_before` (same
    pages as the CLI)."""
    import screens.environments.detail as detail

    two_releases(demo)
    for version in ("v1", "v2", "v1"):
        demo.run("env", "deploy", "dev", version, *NO_WAIT, check=True)
    _code, page1 = demo.json("env", "status", "dev", "--history", "--limit", "2")
    cursor = page1["environments"][0]["history"]["next_before"]
    _code, page2 = demo.json("env", "status", "dev", "--history", "--limit", "2", "--before", cursor)
    monkeypatch.setattr(detail, "PAGE", 2)

    def ids(doc: dict) -> list[str]:
        return [p["id"] for p in doc["environments"][0]["history"]["items"]]

    async def scenario() -> None:
        app = Dashboard(project_dir=demo.root, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await until_app(pilot, lambda: app.screen.loads >= 1)
            await pilot.press("j", "j", "enter")  # cloud, cluster, dev
            await until_app(pilot, lambda: getattr(app.screen, "status", None) is not None)
            screen = app.screen
            history = screen.query_one("#history-table")
            assert [k.value for k in history.rows] == ids(page1)
            images = screen.query_one("#images-table")
            assert [images.get_row(n)[1] for n in ("api", "web")] == ["match", "match"]  # v1 runs, as promoted
            assert {k.value for k in screen.query_one("#workloads-table").rows} == {"api", "web"}
            assert f"--before {cursor}" in str(screen.query_one("#history-hint").render())
            loads = screen.loads
            await pilot.press("n")
            await until_app(pilot, lambda: screen.loads > loads and [k.value for k in history.rows] == ids(page2))
            assert screen.before == cursor and "last page" in str(screen.query_one("#history-hint").render())
            await pilot.press("p")
            await until_app(pilot, lambda: [k.value for k in history.rows] == ids(page1))

    asyncio.run(scenario())
