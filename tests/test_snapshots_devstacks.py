"""Snapshots of the Dev stacks screen (with a real stack brought up by `framework env up`) and of a
run's detail (a real scripted run). Ports, pids, times and tmp paths come from the real engine and
are pinned in the rendered text before the snapshot, so the SVG is stable across runs and machines.

Regenerate on purpose: `.venv/bin/python -m pytest tests/test_snapshots_devstacks.py --snapshot-update`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import yaml

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from engine.runs.engine import execute_run
from engine.workflows.definition import load_workflow
from tests.devstack_fixtures import add_worktree, demo_repo, framework, framework_json
from tests.devstack_fixtures import stacks_cleanup as stacks_cleanup
from tests.test_runs_views import STEPS

__all__ = ["demo_repo", "stacks_cleanup"]  # pytest fixtures used by name below

SIZE = (140, 40)
WHEN = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


def _pinner(replacements: dict[str, str]) -> Callable[[str], str]:
    """Exact values (tmp paths, ports, pids) -> fixed text; longest first; numbers as whole words."""
    ordered = sorted(replacements.items(), key=lambda kv: -len(kv[0]))

    def pin(text: str) -> str:
        for old, new in ordered:
            text = re.sub(rf"\b{re.escape(old)}\b" if old.isdigit() else re.escape(old), new, text)
        return WHEN.sub("2026-01-01 12:00:00", text)

    return pin


def _pin_screen(app: Dashboard, pin: Callable[[str], str]) -> None:
    from textual.widgets import DataTable, Static

    for table in app.screen.query(DataTable):
        for row in list(table.rows):
            for column in list(table.columns):
                value = table.get_cell(row, column)
                if isinstance(value, str) and pin(value) != value:
                    table.update_cell(row, column, pin(value), update_width=True)
    for static in app.screen.query(Static):
        content = static.content
        if isinstance(content, str) and pin(content) != content:
            static.update(pin(content))


def _after(keys: tuple[str, ...], ready: Callable[[Dashboard], bool], pin: Callable[[str], str]) -> object:
    async def run_before(pilot: object) -> None:
        from tests.waiting import until_app

        app = pilot.app  # type: ignore[attr-defined]
        for key in keys:
            await pilot.press(key)  # type: ignore[attr-defined]
            await pilot.pause()  # type: ignore[attr-defined]
        await until_app(pilot, lambda: ready(app), timeout=60)
        await app.workers.wait_for_complete()
        await pilot.pause()  # type: ignore[attr-defined]
        _pin_screen(app, pin)
        await pilot.pause()  # type: ignore[attr-defined]

    return run_before


def test_devstacks_screen_with_a_running_stack(snap_compare: object, demo_repo: tuple[Path, int],
                                               stacks_cleanup: list) -> None:
    """docs/reference-devstack.md#in-the-dashboard-screen-4-dev-stacks: stacks with their ports and worktree,
    the selected stack's services, the port-block holders and the equivalent commands."""
    repo, base = demo_repo
    worktree = add_worktree(repo, "feat")
    up = framework("env", "up", "dev", "--background", "--no-build", cwd=worktree)
    assert up.returncode == 0, up.stderr
    assert framework("env", "devstack", "port", "8000", "--key", "tools", cwd=repo).returncode == 0
    stack = framework_json("env", "ps", cwd=worktree)["stacks"][0]
    values = {str(repo.parent): "/work/projects", os.environ["HOME"]: "~",
              str(base + 100): "8180", str(base + 101): "8181"}
    values.update({str(p["pid"]): f"{4000 + n}" for n, p in enumerate(stack["processes"])})
    app = Dashboard(project_dir=worktree, settings=deterministic_settings(refresh_seconds=3600))

    def ready(app: Dashboard) -> bool:
        screen = app.screen
        return (getattr(screen, "loads", 0) >= 1 and len(screen.query_one("#services-table").rows) == 3
                and len(screen.query_one("#blocks-table").rows) == 2)

    assert snap_compare(app, terminal_size=SIZE,  # type: ignore[operator]
                        run_before=_after(("4",), ready, _pinner(values)))


def test_run_detail_with_plan_and_tasks(snap_compare: object, tmp_path: Path, demo_project: Path) -> None:
    """README.md, Dashboard (key 7, Runs): a run's steps (each tool call and result), its plan and its tasks table."""
    work = tmp_path / "wf"
    (work / "project").mkdir(parents=True)
    (work / "project" / "notes.txt").write_text("TODO one\nTODO two\n")
    (work / "script.yaml").write_text(yaml.safe_dump({"steps": STEPS}))
    (work / "wf.yaml").write_text(yaml.safe_dump({"name": "triage", "instructions": "x",
                                                  "model": {"provider": "scripted", "script": "script.yaml"}}))
    execute_run(load_workflow(work / "wf.yaml"), inputs={}, root=work / "project", run_id="run-20260101-120000-snap01")
    app = Dashboard(project_dir=demo_project, settings=deterministic_settings(refresh_seconds=3600))

    def ready(app: Dashboard) -> bool:
        return getattr(app.screen, "record", None) is not None

    async def open_first(pilot: object) -> None:
        from tests.waiting import until_app

        app = pilot.app  # type: ignore[attr-defined]
        await pilot.press("7")  # type: ignore[attr-defined]
        await until_app(pilot,
                        lambda: getattr(app.screen, "loads", 0) >= 1 and app.screen.query_one("#runs-table").rows)
        await pilot.press("enter")  # type: ignore[attr-defined]
        await _after((), ready, _pinner({str(tmp_path): "/work/tmp", os.environ["HOME"]: "~"}))(pilot)  # type: ignore[operator]

    assert snap_compare(app, terminal_size=SIZE, run_before=open_first)  # type: ignore[operator]
