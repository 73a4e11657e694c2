"""Rollouts screen (README.md, Dashboard: key 2): phases of a real deploy on the process runtime, live, and a
supersede confirmed on the screen; every process is stopped by the `demo` fixture's teardown."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from deploy_fixtures import FRAMEWORK_BIN, add_gated_env, demo_fixture  # noqa: E402,F401
from screen_fixtures import SIZE, cut  # noqa: E402

from app.dashboard import Dashboard  # noqa: E402
from app.settings import deterministic_settings  # noqa: E402
from tests.waiting import until_app


def _start_deploy(demo, env: str, version: str) -> subprocess.Popen[str]:  # type: ignore[no-untyped-def]
    return cli_fork.popen([FRAMEWORK_BIN, "env", "deploy", env, version, "--yes", "--stability-window", "0.3",
                             "--timeout", "120"], cwd=demo.root, env=demo.env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _row(app, env: str) -> object:  # type: ignore[no-untyped-def]
    view = app.screen.view
    return next((r for r in view.environments if r.env == env), None) if view else None


def test_rollouts_show_the_phases_of_a_real_deploy(demo) -> None:  # type: ignore[no-untyped-def]
    """docs/reference-deploy.md#env-deploy phases: an in-flight rollout shows per-workload `progressing` while
    unhealthy, with its wait budget, then `ready`; afterwards the screen says nothing is in flight and shows
    the last rollout."""
    gate, _port = add_gated_env(demo)
    demo.commit("gated env")
    cut(demo, "gated", "g1")
    proc = _start_deploy(demo, "gated", "g1")

    async def scenario() -> None:
        app = Dashboard(project_dir=demo.root, settings=deterministic_settings(refresh_seconds=0.2))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2")
            await until_app(pilot, lambda: app.current_mode == "rollouts" and app.screen.loads >= 1)
            seen: set[str] = set()

            def phase_is(phase: str) -> bool:
                row = _row(app, "gated")
                if row and row.workloads:
                    seen.add(row.workloads[0].phase)
                return bool(row and row.in_flight and row.workloads and row.workloads[0].phase == phase)

            def unhealthy() -> bool:  # listening and answering 503 (before it listens: connection refused)
                return phase_is("progressing") and "503" in " ".join(_row(app, "gated").workloads[0].probes)

            await until_app(pilot, unhealthy)
            row = _row(app, "gated")
            assert row.wait_budget == 120
            assert "in flight" in str(app.screen.query_one("#rollouts-status").render())
            assert app.screen.query_one("#rollout-envs").get_row("gated")[1] == "IN FLIGHT"
            gate.write_text("ok")
            await until_app(pilot, lambda: (r := _row(app, "gated")) is not None and not r.in_flight)
            assert proc.wait(timeout=60) == 0
            await until_app(pilot,
                            lambda: "Nothing in flight" in str(app.screen.query_one("#rollouts-status").render()))
            row = _row(app, "gated")
            assert row.outcome == "ready" and row.workloads[0].phase == "ready"
            assert "progressing" in seen
            assert app.screen.query_one("#rollout-envs").get_row("gated")[1] == "last rollout"

    try:
        asyncio.run(scenario())
    finally:
        proc.kill()
        proc.wait()


def test_supersede_from_the_rollouts_screen(demo) -> None:  # type: ignore[no-untyped-def]
    """docs/reference-deploy.md#env-deploy exit 6 / --supersede: confirming `s` replaces the rollout in
    flight; the replaced deploy ends SUPERSEDED (exit 6) and the new rollout finishes ready."""
    gate, _port = add_gated_env(demo)
    demo.commit("gated env")
    cut(demo, "gated", "g1")
    proc = _start_deploy(demo, "gated", "g1")

    async def scenario() -> None:
        app = Dashboard(project_dir=demo.root,
                        settings=deterministic_settings(refresh_seconds=0.2, deploy_timeout=120))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2")
            await until_app(pilot, lambda: app.current_mode == "rollouts" and app.screen.loads >= 1)
            await until_app(pilot, lambda: (r := _row(app, "gated")) is not None and r.in_flight)
            screen = app.screen
            await pilot.press("j", "j", "j")  # cloud, cluster, dev, gated, prod, staging -> gated
            assert "--supersede" in str(screen.query_one("#rollout-summary").render())
            await pilot.press("s")
            await until_app(pilot, lambda: app.screen is not screen)
            await pilot.press("y")
            assert proc.wait(timeout=60) == 6  # the replaced deploy reports SUPERSEDED
            gate.write_text("ok")
            await until_app(pilot, lambda: screen.last_deploy is not None)
            assert screen.last_deploy.result.exit_code == 0
            assert screen.last_deploy.result.rollout["phase"] == "ready"

    try:
        asyncio.run(scenario())
    finally:
        proc.kill()
        proc.wait()
    code, doc = demo.json("ledger", "show", "gated")
    assert any(a["superseded_by_pid"] for a in doc["applies"]), doc["applies"]
