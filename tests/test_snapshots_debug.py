"""Snapshot of the Debug screen stopped at a breakpoint (docs/reference-debug.md#the-debug-screen): a real
debugpy session of a small program, stopped inside `inner` after a step-in: source with the current line and
the breakpoint marked, stack, variables, threads, output tail."""

from __future__ import annotations

from typing import Any

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from tests.debug_fixtures import CALC, Debug, debug, wait_state  # noqa: F401


def test_debug_screen_stopped_at_a_breakpoint(snap_compare: Any, debug: Debug) -> None:  # noqa: F811
    (debug.root / "services" / "calc.py").write_text(CALC)
    rel = "services/calc.py"
    debug.ok("start", rel)
    debug.ok("break", f"{rel}:{debug.line_of(rel, '# CALL')}")
    wait_state(debug, "stopped")
    debug.ok("step-in")

    async def run_before(pilot: Any) -> None:
        from tests.waiting import until_app

        await pilot.press("8")
        await until_app(pilot, lambda: pilot.app.current_mode == "debug" and (pilot.app.screen.status or {})
                     .get("state") == "stopped" and pilot.app.screen.query_one("#debug-threads").row_count > 0)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    app = Dashboard(project_dir=debug.root, settings=deterministic_settings(refresh_seconds=3600))
    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)
