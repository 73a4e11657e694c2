"""Runs in the dashboard and `platform runs list/show`: real runs executed by the run engine."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import yaml

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from engine.runs.engine import execute_run
from engine.runs.store import list_runs
from engine.workflows.definition import load_workflow
from tests.conftest import run_cli
from tests.test_dashboard import SIZE
from tests.waiting import until_app


def _run(tmp_path: Path, name: str, steps: list[dict]) -> str:
    """Execute a real scripted workflow against a real project dir; return its run id."""
    work = tmp_path / name
    (work / "project").mkdir(parents=True)
    (work / "project" / "notes.txt").write_text("TODO one\nTODO two\n")
    (work / "script.yaml").write_text(yaml.safe_dump({"steps": steps}))
    (work / "wf.yaml").write_text(yaml.safe_dump({"name": name, "instructions": "x",
                                                  "model": {"provider": "scripted", "script": "script.yaml"}}))
    record = execute_run(load_workflow(work / "wf.yaml"), inputs={}, root=work / "project")
    return record.id


STEPS = [
    {"tool": "grep", "params": {"pattern": "TODO", "output_mode": "count"}},
    {"tool": "create_plan", "params": {"title": "Fix TODOs", "description": "d", "complexity": "simple",
                                       "tasks": [{"title": "first", "description": "x"}]}},
    {"message": "done"},
]


def test_runs_list_pages_newest_first_with_a_cursor(tmp_path: Path) -> None:
    """The paging cursor convention (`--before` takes the previous page's `next_before`; stop when it is
    empty) applied to runs; newest first."""
    ids = [_run(tmp_path, f"wf{i}", STEPS) for i in range(3)]
    first = list_runs(limit=2)
    assert [r.id for r in first.runs] == sorted(ids, reverse=True)[:2] and first.next_before
    second = list_runs(limit=2, before=first.next_before)
    assert [r.id for r in second.runs] == sorted(ids)[:1] and second.next_before == ""
    assert first.runs[0].tool_calls == 2 and first.runs[0].status == "succeeded"


def test_runs_cli_list_and_show(tmp_path: Path) -> None:
    """Every screen action has a command: whatever the Runs screen shows, a command shows too (platform runs
    list/show)."""
    run_id = _run(tmp_path, "triage", STEPS)
    listed = run_cli("platform", "runs", "list", "--json", cwd=tmp_path)
    assert listed.exit_code == 0, listed.stderr
    doc = json.loads(listed.stdout)
    assert [r["id"] for r in doc["runs"]] == [run_id] and doc["next_before"] == ""
    shown = run_cli("platform", "runs", "show", run_id, cwd=tmp_path)
    assert shown.exit_code == 0 and "→ grep" in shown.stdout and "Fix TODOs" in shown.stdout
    missing = run_cli("platform", "runs", "show", "run-nope", "--json", cwd=tmp_path)
    assert missing.exit_code == 1 and json.loads(missing.stdout)["error"]["code"] == "run_not_found"


def test_runs_screen_lists_runs_and_shows_steps_plan_and_tasks(tmp_path: Path, demo_project: Path) -> None:
    """README.md, Dashboard (key 7, Runs): Runs shows each run; its detail lists every tool call and result,
    plan and tasks."""
    run_id = _run(tmp_path, "triage", STEPS)

    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings(refresh_seconds=0.2))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("7")
            await until_app(pilot, lambda: app.current_mode == "runs" and getattr(app.screen, "loads", 0) >= 1)
            table = app.screen.query_one("#runs-table")
            assert [k.value for k in table.rows] == [run_id]
            # A run that lands while the screen is open appears on the next poll.
            later = _run(tmp_path, "later", STEPS)
            await until_app(pilot, lambda: later in {k.value for k in table.rows})
            table.move_cursor(row=[k.value for k in table.rows].index(run_id))
            await pilot.press("enter")
            await until_app(pilot, lambda: getattr(app.screen, "record", None) is not None)
            steps = app.screen.query_one("#steps-table")
            kinds = [steps.get_row(k)[1] for k in steps.rows]
            assert kinds == ["tool_call", "tool_result", "tool_call", "tool_result", "message"]
            assert "Fix TODOs" in str(app.screen.query_one("#run-plan").render())
            await pilot.press("escape")
            await until_app(pilot, lambda: app.current_mode == "runs" and len(app.screen_stack) == 1)

    asyncio.run(scenario())


def test_runs_screen_empty_state_names_the_command(demo_project: Path) -> None:
    """Honest empty states: with no runs, the view says so and names the command that fills it."""
    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("7")
            await until_app(pilot, lambda: app.current_mode == "runs" and getattr(app.screen, "loads", 0) >= 1)
            empty = app.screen.query_one("#runs-empty")
            assert empty.display and "platform run <workflow>" in str(empty.query("Static").last().render())

    asyncio.run(scenario())
