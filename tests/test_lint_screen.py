"""The Lint view (docs/reference-lint.md#dashboard): findings by analyzer and file from the same engine call as
`framework lint`, enter opens the selected finding's file at its line in `$EDITOR`, `r` reruns the lint scoped to
that file; and its snapshot. On the seeded copy of the session's project (tests/lint_fixtures.py)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from tests.authoring_fixtures import go_caches  # noqa: F401
from tests.lint_fixtures import HANDLERS, line_of, lint_cache, lint_env, lint_projects  # noqa: F401
from tests.waiting import until_app

SIZE = (140, 40)


def _app(root: Path) -> Dashboard:
    return Dashboard(project_dir=root, settings=deterministic_settings(refresh_seconds=3600))


async def _open(pilot: Any) -> Any:
    await pilot.press("L")
    screen = await until_app(pilot, lambda: pilot.app.screen if pilot.app.current_mode == "lint"
                             and pilot.app.screen.loads >= 1 else None, timeout=150, what="the first lint")
    await pilot.app.workers.wait_for_complete()
    return screen


def test_lint_view_lists_opens_and_reruns(lint_projects: tuple[Path, Path], tmp_path: Path,
                                          monkeypatch: Any) -> None:
    """docs/reference-lint.md#dashboard: the view lists every finding of the run (by analyzer, then file), enter
    runs `$EDITOR +<line> <file>` for the selected finding, `r` reruns the lint with `--scope` of that file and
    keeps the other files' findings."""
    seeded, _ = lint_projects
    record = tmp_path / "editor-args.json"
    editor = tmp_path / "editor.py"
    editor.write_text(f"#!{sys.executable}\nimport json, sys\nopen({str(record)!r}, 'w').write(json.dumps("
                      "sys.argv[1:]))\n")
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    asyncio.run(_scenario(seeded, record))


async def _scenario(seeded: Path, record: Path) -> None:
    app = _app(seeded)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        table = screen.query_one("#lint-table")
        assert table.row_count == len(screen.findings) > 10
        analyzers = [f.analyzer for f in screen.findings]
        assert analyzers == sorted(analyzers) and "time-bucketing" in analyzers
        target = next(i for i, f in enumerate(screen.findings) if f.analyzer == "time-bucketing")
        table.move_cursor(row=target)
        await pilot.pause()
        assert f"--scope {HANDLERS}/deps.go" in str(screen.query_one("#lint-command").render())
        await pilot.press("enter")
        args = json.loads(record.read_text()) if record.exists() else None
        deps = f"{HANDLERS}/deps.go"
        assert args == [f"+{line_of(seeded, deps, 'time.Local')}", str(seeded / deps)]
        before = len(screen.findings)
        whole_project = [f for f in screen.findings if f.file == deps and f.analyzer in ("go vet", "golangci-lint")]
        assert len(whole_project) >= 2  # go vet's printf, golangci-lint's errcheck
        await pilot.press("r")
        await until_app(pilot, lambda: f"reran: {deps}" in screen.last_status, timeout=150, what="the scoped rerun")
        assert len(screen.findings) == before - len(whole_project)  # scoped runs skip whole-project linters
        assert {f.file for f in screen.findings} > {deps}


def test_lint_view_snapshot(snap_compare: Any, lint_projects: tuple[Path, Path]) -> None:
    """docs/reference-lint.md#dashboard: the layout of the Lint view on the seeded project."""
    seeded, _ = lint_projects

    async def run_before(pilot: Any) -> None:
        await _open(pilot)
        await pilot.pause()

    assert snap_compare(_app(seeded), terminal_size=SIZE, run_before=run_before)
