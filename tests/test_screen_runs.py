"""Run detail: live-follow of a running run's steps, `/` filter on steps, plan and tasks panel.

The run is a real scripted workflow executed by the run engine in a thread; its `on_step` hook
(the engine's own per-step callback) holds each step until the test releases it, so the run is
observably `running` while the dashboard follows it.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import yaml

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from engine.runs.engine import execute_run
from engine.runs.store import load_run
from engine.workflows.definition import load_workflow
from tests.test_dashboard import SIZE
from tests.test_runs_views import STEPS
from tests.waiting import until_app


def test_running_run_steps_follow_filter_and_tasks(tmp_path: Path, demo_project: Path) -> None:
    """README.md, Dashboard (key 7, Runs: live steps of a run, its plan and tasks): while a run is running and the
    cursor is on the last step, new steps move it to the newest; elsewhere it stays put; `/` filters
    the steps; the finished run's tasks are listed with their status as the engine recorded them."""
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("TODO one\n")
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"steps": STEPS}))
    (tmp_path / "wf.yaml").write_text(yaml.safe_dump({"name": "live", "instructions": "x",
                                                      "model": {"provider": "scripted", "script": "script.yaml"}}))
    gate = threading.Semaphore(0)
    run_id = "run-20260101-000000-live01"
    runner = threading.Thread(target=execute_run, daemon=True, kwargs={
        "workflow": load_workflow(tmp_path / "wf.yaml"), "inputs": {}, "root": tmp_path / "project",
        "run_id": run_id, "on_step": lambda step: gate.acquire(timeout=60)})
    runner.start()

    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings(refresh_seconds=0.1))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("7")
            await until_app(pilot, lambda: app.current_mode == "runs" and getattr(app.screen, "loads", 0) >= 1)
            await until_app(pilot, lambda: len(app.screen.query_one("#runs-table").rows) == 1)
            await pilot.press("enter")
            await until_app(pilot, lambda: getattr(app.screen, "record", None) is not None)
            detail = app.screen
            steps = detail.query_one("#steps-table")
            await until_app(pilot, lambda: steps.row_count == 1)
            assert detail.record.status == "running"
            gate.release(2)  # tool_result and the second tool_call land
            await until_app(pilot, lambda: steps.row_count == 3)
            assert steps.cursor_row == 2  # followed to the newest step
            await pilot.press("k")  # the user looks at an older step: no more following
            gate.release(1)
            await until_app(pilot, lambda: steps.row_count == 4)
            assert steps.cursor_row == 1
            await pilot.press("G")
            gate.release(10)
            runner.join(timeout=60)
            await until_app(pilot, lambda: detail.record.status == "succeeded")
            assert steps.cursor_row == steps.row_count - 1 == 4

            # the plan and tasks panel: same tasks, same status as the engine's record
            record = load_run(run_id)
            tasks = detail.query_one("#tasks-table")
            assert tasks.display
            assert [tasks.get_row(k)[:2] for k in tasks.rows] == [[t["id"], t["status"]] for t in record.tasks]
            assert "Fix TODOs" in str(detail.query_one("#run-plan").render())

            await pilot.press("t")  # focus the tasks table, and back
            assert tasks.has_focus
            await pilot.press("t")
            assert steps.has_focus

            await pilot.press("slash")
            await pilot.press(*"result")
            await until_app(pilot, lambda: steps.row_count == 2)
            assert {steps.get_row(k)[1] for k in steps.rows} == {"tool_result"}
            await pilot.press("escape")  # first esc clears the filter ...
            await until_app(pilot, lambda: steps.row_count == 5)
            assert app.screen is detail
            await pilot.press("escape")  # ... the next goes back to the list
            await until_app(pilot, lambda: app.current_mode == "runs" and len(app.screen_stack) == 1)

    try:
        asyncio.run(scenario())
    finally:
        gate.release(100)
        runner.join(timeout=60)
