"""Dev stacks screen driven by keyboard: real git worktrees of a demo copy, real processes; every
result asserted through the engine's own commands (`env ps --json`, `env devstack list --json`)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from tests.devstack_fixtures import add_worktree, demo_repo, framework, framework_json, get, healthz, pid_alive
from tests.devstack_fixtures import stacks_cleanup as stacks_cleanup
from tests.test_dashboard import SIZE
from tests.waiting import until_app

__all__ = ["demo_repo", "stacks_cleanup"]  # pytest fixtures used by name below


def _rows(table: object) -> list[str]:
    return [str(k.value) for k in table.rows]  # type: ignore[attr-defined]


def test_up_logs_and_down_from_the_dashboard(demo_repo: tuple[Path, int], stacks_cleanup: list) -> None:
    """docs/reference-devstack.md#in-the-dashboard-screen-4-dev-stacks (env up, env ps, env down): a stack
    brought up from the dashboard runs (as `env ps` sees it) with healthy services on its worktree's block; a
    service's log is shown and follows new lines; bringing it down from the dashboard stops its processes."""
    repo, base = demo_repo
    worktree = add_worktree(repo, "feat")

    async def scenario() -> None:
        app = Dashboard(project_dir=worktree, settings=deterministic_settings(refresh_seconds=0.5))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await until_app(pilot, lambda: app.current_mode == "devstacks" and getattr(app.screen, "loads", 0) >= 1)
            screen = app.screen
            assert screen.query_one("#stacks-empty").display  # nothing runs yet: honest empty state
            await pilot.press("u")
            await until_app(pilot, lambda: getattr(app.screen, "names", None) is not None)
            assert app.screen.names == ["dev"]  # only the local environment can come up
            assert "framework env up dev --background" in str(app.screen.query_one("#up-command").render())
            await pilot.press("enter")
            await until_app(pilot, lambda: not screen.busy and len(screen.query_one("#stacks-table").rows) == 1,
                            timeout=90, what="the stack up and listed")  # the outcome, not the transient busy

            doc = framework_json("env", "ps", cwd=worktree)
            assert [(s["env"], s["key"], s["status"]) for s in doc["stacks"]] == [("dev", "feat", "running")]
            ports = {p["name"]: p["ports"] for p in doc["stacks"][0]["processes"]}
            assert ports["api"] == [base + 100] and ports["web"] == [base + 101]  # block 1 of key feat
            assert healthz(base + 100) and healthz(base + 101)
            pids = [p["pid"] for p in doc["stacks"][0]["processes"]]
            progress = "\n".join(screen.query_one("#stacks-progress").lines)
            # progress per phase, as the engine reported it (build ran py_compile; host started both)
            assert re.search(r"build +done +built api, web", progress), progress
            assert re.search(r"host +done +api, web", progress), progress
            assert "api healthy" in progress

            # services of the selected stack, then the api service's log, live-following
            services = screen.query_one("#services-table")
            await until_app(pilot, lambda: "api" in _rows(services))
            services.focus()
            services.move_cursor(row=_rows(services).index("api"))
            await pilot.press("l")
            await until_app(pilot, lambda: app.screen.__class__.__name__ == "ServiceLogScreen")
            log = app.screen.query_one("#service-log")
            await until_app(pilot, lambda: any("api listening on" in line for line in log.lines))
            get(base + 100, "/from-the-test")
            await until_app(pilot, lambda: any("/from-the-test" in line for line in log.lines))
            await pilot.press("f")
            assert app.screen.follow is False and "paused" in str(app.screen.query_one("#log-status").render())
            await pilot.press("escape")
            await until_app(pilot, lambda: app.screen is screen)

            # a block whose key runs a stack is not released: the dry run is refused and says why
            blocks = screen.query_one("#blocks-table")
            await until_app(pilot, lambda: len(blocks.rows) == 1)
            blocks.focus()
            await pilot.press("x")
            await until_app(pilot, lambda: "has a running dev stack" in "\n".join(
                screen.query_one("#stacks-progress").lines) and not screen.busy, what="the refusal reported")
            assert app.screen is screen  # no confirmation offered

            screen.query_one("#stacks-table").focus()
            await pilot.press("d")
            await until_app(pilot, lambda: app.screen.__class__.__name__ == "ConfirmScreen")
            assert "framework env down dev" in str(app.screen.query_one("#confirm-command").render())
            await pilot.press("y")
            await until_app(pilot, lambda: app.screen is screen)
            await until_app(pilot, lambda: not screen.busy and not screen.query_one("#stacks-table").rows)
            assert framework_json("env", "ps", cwd=worktree)["stacks"] == []
            assert not any(pid_alive(pid) for pid in pids)
            assert not healthz(base + 100)

    asyncio.run(scenario())


def test_port_block_holders_listed_and_released_with_confirmation(demo_repo: tuple[Path, int],
                                                                   stacks_cleanup: list) -> None:
    """docs/reference-devstack.md#in-the-dashboard-screen-4-dev-stacks (env devstack list, release): the
    holders match `env devstack list` (derived port-block, standalone); release shows a dry run first, changes
    nothing when cancelled, and releases the block once confirmed."""
    repo, _base = demo_repo
    worktree = add_worktree(repo, "feat")
    assert framework("env", "devstack", "port", "8000", cwd=worktree).returncode == 0
    assert framework("env", "devstack", "port", "8000", "--key", "tools", cwd=repo).returncode == 0
    listed = framework_json("env", "devstack", "list", cwd=repo)
    assert {(b["key"], b["label"]) for b in listed["blocks"]} == {("feat", "derived port-block"),
                                                                   ("tools", "standalone")}

    async def scenario() -> None:
        app = Dashboard(project_dir=repo, settings=deterministic_settings(refresh_seconds=0.5))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await until_app(pilot, lambda: app.current_mode == "devstacks" and getattr(app.screen, "loads", 0) >= 1)
            screen = app.screen
            blocks = screen.query_one("#blocks-table")
            await until_app(pilot, lambda: len(blocks.rows) == 2)
            cells = {blocks.get_row(k)[1]: blocks.get_row(k) for k in blocks.rows}
            assert cells["feat"][4] == "derived port-block" and cells["tools"][4] == "standalone"
            assert cells["feat"][5] == "yes"  # its worktree exists

            blocks.focus()
            blocks.move_cursor(row=[blocks.get_row(k)[1] for k in blocks.rows].index("tools"))
            await pilot.press("x")
            await until_app(pilot, lambda: app.screen.__class__.__name__ == "ConfirmScreen")
            assert "Dry run" in str(app.screen.query_one("#confirm-body").render())
            assert "framework env devstack release tools --apply" in str(
                app.screen.query_one("#confirm-command").render())
            await pilot.press("n")  # cancelled: nothing changes
            await until_app(pilot, lambda: app.screen is screen)
            assert {b["key"] for b in framework_json("env", "devstack", "list", cwd=repo)["blocks"]} == {"feat",
                                                                                                        "tools"}
            await pilot.press("x")
            await until_app(pilot, lambda: app.screen.__class__.__name__ == "ConfirmScreen")
            await pilot.press("y")
            await until_app(pilot, lambda: app.screen is screen)
            await until_app(pilot, lambda: not screen.busy and len(blocks.rows) == 1)
            assert [b["key"] for b in framework_json("env", "devstack", "list", cwd=repo)["blocks"]] == ["feat"]

    asyncio.run(scenario())


def test_stacks_started_elsewhere_appear_live_and_the_cursor_stays(demo_repo: tuple[Path, int],
                                                                   stacks_cleanup: list) -> None:
    """docs/reference-devstack.md#in-the-dashboard-screen-4-dev-stacks (live: watchdog on the stacks
    directory, rows diffed by key): stacks brought up and down by the CLI while the screen is open appear and
    go without a poll; the cursor stays on its stack when another one is added."""
    repo, _base = demo_repo
    worktree = add_worktree(repo, "feat")

    async def scenario() -> None:
        app = Dashboard(project_dir=repo, settings=deterministic_settings(watch=True, refresh_seconds=3600,
                                                                          debounce_seconds=0.05))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await until_app(pilot, lambda: app.current_mode == "devstacks" and getattr(app.screen, "loads", 0) >= 1)
            screen = app.screen
            table = screen.query_one("#stacks-table")
            assert framework("env", "up", "dev", "--background", "--no-build", cwd=worktree).returncode == 0
            await until_app(pilot, lambda: len(table.rows) == 1)
            feat_id = _rows(table)[0]
            assert screen.selected_stack().key == "feat"
            assert framework("env", "up", "dev", "--background", "--no-build", cwd=repo).returncode == 0
            await until_app(pilot, lambda: len(table.rows) == 2)
            assert screen.selected_stack().id == feat_id  # cursor still on the same stack
            assert framework("env", "down", "dev", cwd=worktree).returncode == 0
            await until_app(pilot, lambda: feat_id not in _rows(table) and len(table.rows) == 1)
            assert [s["key"] for s in framework_json("env", "ps", cwd=repo)["stacks"]] == [""]

    asyncio.run(scenario())


def test_a_failed_up_is_reported_and_leaves_nothing_running(demo_repo: tuple[Path, int],
                                                            stacks_cleanup: list) -> None:
    """docs/reference-devstack.md#exit-codes (`env up`: a busy port fails the start; nothing is left running):
    from the dashboard the failure is shown with the engine's message, and `env ps` lists no stack."""
    import socket

    repo, base = demo_repo
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", base))  # the primary checkout's api port (block 0)
        squatter.listen()

        async def scenario() -> None:
            app = Dashboard(project_dir=repo, settings=deterministic_settings(refresh_seconds=0.5))
            async with app.run_test(size=SIZE) as pilot:
                await pilot.press("4")
                await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1)
                screen = app.screen
                await pilot.press("u")
                await until_app(pilot, lambda: getattr(app.screen, "names", None) is not None)
                await pilot.press("enter")

                def progress() -> str:
                    return "\n".join(screen.query_one("#stacks-progress").lines)

                # the outcome (a fast failure may end the busy state before any poll could see it)
                await until_app(pilot, lambda: "env up dev failed" in progress() and not screen.busy,
                                what=lambda: f"the failed up reported: {progress()!r}")
                assert f"port {base}" in progress()
                assert not screen.query_one("#stacks-table").rows

        asyncio.run(scenario())
    assert framework_json("env", "ps", cwd=repo)["stacks"] == []


def test_help_lists_the_dev_stack_bindings_and_keymap_remaps_them(demo_project: Path) -> None:
    """README.md, Dashboard (`?`, keys remapped by binding id): `?` lists every binding of the active screen
    with its id; a keymap setting remaps a Dev stacks binding by id."""
    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings(keymap={"devstacks.reload": "R"}))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1)
            screen = app.screen
            await pilot.press("R")  # remapped reload
            await until_app(pilot, lambda: screen.loads >= 2)
            await pilot.press("question_mark")
            await until_app(pilot, lambda: app.screen.__class__.__name__ == "HelpScreen")
            ids = {row[2] for row in app.screen.rows}
            assert {"devstacks.up", "devstacks.down", "devstacks.logs", "devstacks.release",
                    "devstacks.reload", "devstacks.filter"} <= ids

    asyncio.run(scenario())
