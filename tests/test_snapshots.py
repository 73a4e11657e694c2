"""Layout snapshots (pytest-textual-snapshot): explicit terminal size, deterministic settings.

Regenerate on purpose with `make snapshots` and look at snapshot_report.html before committing.
"""

from __future__ import annotations

from pathlib import Path

from app.dashboard import Dashboard
from app.settings import deterministic_settings

SIZE = (120, 32)


async def _wait_loaded(pilot: object) -> None:
    """Wait until the Environments screen has rendered its first engine result (no fixed sleeps)."""
    from tests.waiting import until_app

    app = pilot.app  # type: ignore[attr-defined]
    await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1, timeout=60)
    await app.workers.wait_for_complete()
    await pilot.pause()  # type: ignore[attr-defined]


def test_environments_screen_layout(snap_compare: object, demo_project: Path) -> None:
    """README.md, Dashboard (key 1): the Environments screen with the demo's five environments and the sidebar."""
    app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
    assert snap_compare(app, terminal_size=SIZE, run_before=_wait_loaded)  # type: ignore[operator]


def _after_keys(*keys: str) -> object:
    async def run_before(pilot: object) -> None:
        await _wait_loaded(pilot)
        await pilot.press(*keys)  # type: ignore[attr-defined]
        await pilot.pause()  # type: ignore[attr-defined]

    return run_before


def test_help_layout(snap_compare: object, demo_project: Path) -> None:
    """README.md, Dashboard: the `?` help listing every binding."""
    app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
    assert snap_compare(app, terminal_size=SIZE, run_before=_after_keys("question_mark"))  # type: ignore[operator]


def test_empty_state_layout(snap_compare: object, demo_project: Path) -> None:
    """Honest empty states: an empty state names the commands that fill the view (Debug with no
    session, docs/reference-debug.md#the-debug-screen: `framework debug start`, or `:debug start api` from the
    dashboard)."""
    app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
    assert snap_compare(app, terminal_size=SIZE, run_before=_after_keys("8"))  # type: ignore[operator]
