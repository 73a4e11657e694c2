"""Snapshots of the Environments (with ledger data), Plans and Rollouts screens (README.md, Dashboard:
keys 1-3).

Data comes from the real engine on demo copies: releases cut and deployed by the real CLI. Clocks,
generated ids and ports are kept out of the text: `show_volatile=False` hides ages, elapsed times
and promotion ids; the deployed environment probes health by command (no port in the text); the
Plans demo is committed with pinned dates so its commit ids are stable.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from deploy_fixtures import FRAMEWORK_BIN, add_gated_env, demo_fixture  # noqa: E402,F401
from screen_fixtures import COMMAND_HEALTH, cut, plain_demo  # noqa: E402

from app.dashboard import Dashboard  # noqa: E402
from app.settings import deterministic_settings  # noqa: E402
from tests.waiting import until_app

SIZE = (130, 36)


def _deployed(demo: Any) -> None:
    add_gated_env(demo, health=COMMAND_HEALTH)
    demo.commit("gated env")
    cut(demo, "gated", "g1")
    demo.run("env", "deploy", "gated", "g1", "--yes", "--stability-window", "0.3", check=True)


def _after(mode_key: str | None, *keys: str, ready: Any = None) -> Any:
    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1)
        if mode_key:
            await pilot.press(mode_key)
            await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1 and app.current_mode != "environments")
        await pilot.press(*keys)
        if ready is not None:
            await until_app(pilot, lambda: ready(app))
        await app.workers.wait_for_complete()
        await pilot.pause()

    return run_before


def test_environments_with_ledger_data_layout(snap_compare: Any, demo: Any) -> None:
    """README.md, Dashboard (key 1): bound release, phase, verify summary, health per environment from the
    real ledger."""
    _deployed(demo)
    app = Dashboard(project_dir=demo.root, settings=deterministic_settings(show_volatile=False))
    assert snap_compare(app, terminal_size=SIZE, run_before=_after(None))


def test_plans_layout(snap_compare: Any, demo: Any, tmp_path: Path) -> None:
    """README.md, Dashboard (key 3): the plan of v1 for the unbound dev (images with digests, direction,
    findings, command)."""
    root = plain_demo(tmp_path, demo.env)
    cli_fork.run([FRAMEWORK_BIN, "env", "build", "dev", "--release", "v1"], cwd=root, env=demo.env, check=True,
                   capture_output=True)
    app = Dashboard(project_dir=root, settings=deterministic_settings(show_volatile=False))
    assert snap_compare(app, terminal_size=SIZE, run_before=_after(
        "3", "j", "j", "enter", "enter", ready=lambda a: a.screen.plan_result is not None))


def test_rollouts_layout(snap_compare: Any, demo: Any) -> None:
    """README.md, Dashboard (key 2): nothing in flight -> the last rollout per environment, said so; workloads
    and log tail."""
    _deployed(demo)
    app = Dashboard(project_dir=demo.root, settings=deterministic_settings(show_volatile=False))
    assert snap_compare(app, terminal_size=SIZE, run_before=_after(
        "2", "j", "j", "j", ready=lambda a: a.screen.query_one("#rollout-workloads").row_count == 1))
