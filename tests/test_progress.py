"""Progress of long headless work (README.md#progress-and-shell-completion): rich bars on a real terminal
(a pty), not a byte of them through a pipe or with --json; the dashboard's command view shows the same
steps as a progress bar."""

from __future__ import annotations

import asyncio
import os
import pty
import re
import subprocess
from pathlib import Path

import cli_fork
import pytest

from tests.conftest import read_terminal
from tests.database_fixtures import without_demo_database, write
from tests.deploy_fixtures import FRAMEWORK_BIN, demo_fixture  # noqa: F401
from tests.pg_fixtures import pg_server, pg_url  # noqa: F401,F811
from tests.waiting import until_app

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
BAR = "━"  # rich's bar character: the bytes a progress display writes and plain output never does


def on_pty(argv: list[str], cwd: Path, env: dict[str, str], program: str = FRAMEWORK_BIN) -> tuple[int, str]:
    """Run the program with stdin, stdout and stderr on a fresh pty (a real terminal) and read it all."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in env.items() if k != "NO_COLOR"} | {"TERM": "xterm-256color", "COLUMNS": "120"}
    proc = subprocess.Popen([program, *argv], cwd=cwd, stdin=follower, stdout=follower, stderr=follower,
                            env=env)
    os.close(follower)
    output = read_terminal(leader)
    code = proc.wait(timeout=120)
    return code, output.decode(errors="replace")


def test_env_build_push_shows_bars_on_a_terminal_and_nothing_in_pipes_or_json(demo) -> None:
    """README.md#progress-and-shell-completion: `env build --push` on a terminal draws a `build` bar over the
    workloads (api, web: the demo without its database) and a `push` bar over their artifacts; through a
    pipe, and with --json even on a terminal, no progress byte is written."""
    code, screen = on_pty(["env", "build", "dev", "--push"], demo.root, demo.env)
    text = ANSI.sub("", screen)
    assert code == 0, text
    assert BAR in text and re.search(r"build .*2/2", text) and re.search(r"push .*2/2", text), text
    assert "pushed artifacts to the file store" in text  # the result, after the bars

    piped = demo.run("env", "build", "dev", "--push")
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    assert "api: built" in piped.stdout and BAR not in piped.stdout

    code, screen = on_pty(["env", "build", "dev", "--push", "--json"], demo.root, demo.env)
    assert code == 0 and BAR not in screen and "building" not in screen and "\x1b[?25l" not in screen
    assert screen.lstrip().startswith("{") and '"pushed": true' in screen


def migrations(first: int, last: int) -> dict[str, str]:
    return {f"202401010000{i:02d}_t{i}.up.sql": f"CREATE TABLE t{i} (id bigint PRIMARY KEY, name text);\n"
            for i in range(first, last + 1)}


@pytest.fixture
def db_project(demo) -> Path:
    without_demo_database(demo.root)
    write(demo.root / "db" / "migrations", migrations(1, 5))
    write(demo.root / "db" / "seeds", {"vocab.yaml": "rows: 3\n"})
    return demo.root


def test_db_migrate_up_and_seed_apply_show_bars_on_a_terminal_only(demo, db_project: Path, pg_url: str) -> None:  # noqa: F811
    """README.md#progress-and-shell-completion: `db migrate up` of many files draws a `migrate` bar over the
    pending files and `db seed apply` a `seed` bar over the tables, on a terminal; with --json (even on a
    terminal) and through a pipe they stay silent (docs/reference-db.md#commands)."""
    code, screen = on_pty(["db", "migrate", "up", "--dsn", pg_url, "--json"], db_project, demo.env)
    assert code == 0 and '"ok": true' in screen and "t5" in screen
    assert BAR not in screen and "\x1b[?25l" not in screen  # 5 files applied, not a byte of progress

    write(db_project / "db" / "migrations", migrations(6, 10))  # five more pending files
    code, screen = on_pty(["db", "migrate", "up", "--dsn", pg_url], db_project, demo.env)
    text = ANSI.sub("", screen)
    assert code == 0, text
    assert BAR in text and re.search(r"migrate .*5/5", text), text
    assert "applied 20240101000010_t10" in text

    code, screen = on_pty(["db", "seed", "apply", "--dsn", pg_url], db_project, demo.env)
    text = ANSI.sub("", screen)
    assert code == 0, text
    assert BAR in text and re.search(r"seed .*10/10", text), text

    piped = cli_fork.run([FRAMEWORK_BIN, "db", "seed", "apply", "--dsn", pg_url], cwd=db_project, env=demo.env,
                           capture_output=True, text=True, timeout=60, check=False)
    assert piped.returncode == 0 and BAR not in piped.stderr + piped.stdout and "seed" not in piped.stderr


def test_platform_db_migrate_up_shows_a_bar_on_a_terminal_only(tmp_path: Path) -> None:
    """README.md#progress-and-shell-completion: `platform db migrate up` counts the embedded migrations it
    applies on a terminal (docs/reference-webhooks.md#commands); with --json nothing, and once current no bar."""
    platform = str(Path(FRAMEWORK_BIN).with_name("platform"))
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'a.db'}"}
    code, screen = on_pty(["db", "migrate", "up"], tmp_path, env, platform)
    text = ANSI.sub("", screen)
    assert code == 0 and BAR in text, text
    pending = re.search(r"migrate .*?(\d+)/(\d+)", text)
    assert pending and re.search(rf"migrate .*{pending.group(2)}/{pending.group(2)}", text), text
    code, screen = on_pty(["db", "migrate", "up"], tmp_path, env, platform)
    assert code == 0 and BAR not in screen and "already current" in screen  # nothing pending: no bar
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'b.db'}"
    code, screen = on_pty(["db", "migrate", "up", "--json"], tmp_path, env, platform)
    assert code == 0 and '"ok": true' in screen and BAR not in screen


def test_dashboard_command_view_shows_the_progress_of_the_command(demo) -> None:
    """README.md#dashboard: the `:` command view runs the headless program and shows its progress (the same
    steps the terminal's bars show) as a progress bar, never as event text in the output."""
    from textual.widgets import ProgressBar

    from app.dashboard import Dashboard
    from app.settings import deterministic_settings
    from screens.command_line import CommandOutputScreen

    async def scenario() -> None:
        app = Dashboard(project_dir=demo.root, settings=deterministic_settings())
        async with app.run_test(size=(120, 36)) as pilot:
            view = CommandOutputScreen(["framework", "env", "build", "dev", "--push"], demo.root)
            await app.push_screen(view)
            await until_app(pilot, lambda: view.result is not None, timeout=120, what="the build to finish")
            assert view.result is not None and view.result.exit_code == 0, view.result
            tasks = [(s.task, s.done, s.total) for s in view.steps]
            assert ("build", 2, 2) in tasks and ("push", 2, 2) in tasks, tasks
            await until_app(pilot, lambda: view.query_one(ProgressBar).progress == 2, what="the bar at 2 of 2")
            bar = view.query_one(ProgressBar)
            assert bar.display and bar.total == 2
            assert "\x1e" not in view.result.stderr and "progress" not in view.result.stderr
            assert "building api" in view.result.stderr and "api: built" in view.result.stdout

    asyncio.run(scenario())
