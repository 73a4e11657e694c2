"""Plans screen (README.md, Dashboard: key 3) driven by keyboard on a real demo copy with real processes.

Assertions read the machine ledger through the real CLI (`framework env status <env> --json`).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture  # noqa: E402,F401
from screen_fixtures import SIZE, current, two_releases  # noqa: E402

from app.dashboard import Dashboard  # noqa: E402
from app.settings import deterministic_settings  # noqa: E402
from tests.waiting import until_app


def _app(demo, **settings):  # type: ignore[no-untyped-def]
    return Dashboard(project_dir=demo.root, settings=deterministic_settings(deploy_timeout=120, **settings))


async def _open_plan(app, pilot, release_row: int) -> None:  # type: ignore[no-untyped-def]
    """Plans screen, first environment (dev), the release on `release_row`, plan read."""
    await pilot.press("3")
    await until_app(pilot, lambda: app.current_mode == "plans" and app.screen.loads >= 1)
    await pilot.press("j", "j", "enter")  # cloud, cluster, dev -> focus the releases
    await pilot.press(*["j"] * release_row, "enter")
    await until_app(pilot, lambda: app.screen.plan_result is not None)


def test_deploy_confirmed_from_plans_lands_in_the_ledger(demo) -> None:  # type: ignore[no-untyped-def]
    """docs/reference-deploy.md#env-deploy (confirmation bound to the plan digest): a deploy confirmed on the
    Plans screen is promoted with that plan's digest, and the equivalent `--approve <digest>` command is
    shown."""
    two_releases(demo)

    async def scenario() -> None:
        app = _app(demo)
        async with app.run_test(size=SIZE) as pilot:
            await _open_plan(app, pilot, 1)  # releases newest first: v2, v1 -> v1
            screen = app.screen
            plan = screen.plan_result.deploy_plan
            assert screen.plan_for == ("dev", "v1") and plan["direction"] == "INITIAL"
            shown = str(screen.query_one("#plan-command").render())
            assert f"framework env deploy dev v1 --approve {plan['digest']}" in shown
            await pilot.press("d")
            await until_app(pilot, lambda: app.screen is not screen)
            assert "--approve" in str(app.screen.query_one("#confirm-command").render())
            await pilot.press("y")
            await until_app(pilot, lambda: screen.last_deploy is not None)
            assert screen.last_deploy.result.exit_code == 0, screen.last_deploy.result.refusal
            assert any("ready" in line for line in screen.progress)
            promotion = current(demo, "dev")
            assert promotion["release"] == "v1" and promotion["plan_digest"] == plan["digest"]

    asyncio.run(scenario())


def test_moved_environment_is_refused_and_one_key_replans(demo) -> None:  # type: ignore[no-untyped-def]
    """docs/reference-deploy.md#env-deploy exit 3 (compare-and-set): when the environment moves after the plan
    was read, the confirmed deploy is refused and shown; `p` re-plans and the new plan deploys."""
    two_releases(demo)

    async def scenario() -> None:
        app = _app(demo)
        async with app.run_test(size=SIZE) as pilot:
            await _open_plan(app, pilot, 0)  # v2, read while dev is unbound
            screen = app.screen
            stale = screen.plan_result.deploy_plan["digest"]
            demo.run("env", "deploy", "dev", "v1", "--yes", "--stability-window", "0.3", check=True)  # moves dev
            moved = current(demo, "dev")
            await pilot.press("d")
            await until_app(pilot, lambda: app.screen is not screen)
            await pilot.press("y")
            await until_app(pilot, lambda: screen.last_deploy is not None)
            assert screen.last_deploy.result.exit_code == 3
            refusal = screen.query_one("#plan-refusal")
            assert refusal.display and "Press p to re-plan" in str(refusal.render())
            assert current(demo, "dev")["id"] == moved["id"]  # nothing written by the refused deploy
            await pilot.press("p")
            await until_app(pilot, lambda: screen.plan_result is not None)
            fresh = screen.plan_result.deploy_plan
            assert fresh["digest"] != stale and fresh["current_promotion_id"] == moved["id"]
            assert fresh["direction"] == "AHEAD" and not refusal.display
            screen.last_deploy = None
            await pilot.press("d")
            await until_app(pilot, lambda: app.screen is not screen)
            await pilot.press("y")
            await until_app(pilot, lambda: screen.last_deploy is not None)
            assert screen.last_deploy.result.exit_code == 0
            promotion = current(demo, "dev")
            assert promotion["release"] == "v2" and promotion["plan_digest"] == fresh["digest"]

    asyncio.run(scenario())


def test_protected_environment_needs_its_name_typed(demo) -> None:  # type: ignore[no-untyped-def]
    """Protected environments (the dashboard's `protected_environments` setting): deploying to one needs the
    environment's name typed; `y` alone or a wrong name writes nothing."""
    from screens.deploys.confirm import ConfirmDeployScreen

    two_releases(demo)

    async def scenario() -> None:
        app = _app(demo, protected_environments=["dev"])
        async with app.run_test(size=SIZE) as pilot:
            await _open_plan(app, pilot, 1)
            screen = app.screen
            assert screen.query_one("#plan-envs").get_row("dev")[3] == "yes"
            await pilot.press("d")
            await until_app(pilot, lambda: isinstance(app.screen, ConfirmDeployScreen))
            await pilot.press("y", "enter")  # "y" is typed into the name box: not a confirmation
            assert isinstance(app.screen, ConfirmDeployScreen)
            assert "does not match" in str(app.screen.query_one("#confirm-protected").render())
            assert current(demo, "dev") is None
            await pilot.press("backspace", *"dev", "enter")
            await until_app(pilot, lambda: screen.last_deploy is not None)
            assert screen.last_deploy.result.exit_code == 0
            assert current(demo, "dev")["release"] == "v1"

    asyncio.run(scenario())


def test_destructive_finding_is_shown_and_acknowledged_on_confirm(demo) -> None:  # type: ignore[no-untyped-def]
    """docs/reference-deploy.md#env-deploy plan findings: a release without a running workload shows the stop-class
    `workload_removed`; the confirmed command carries `--acknowledge-destructive` and the deploy lands."""
    import re

    demo.run("env", "build", "dev", "--release", "v1", check=True)
    demo.run("env", "deploy", "dev", "v1", "--yes", "--stability-window", "0.3", check=True)
    main = demo.root / "deploy" / "kcl" / "dev" / "main.k"
    main.write_text(re.sub(r'\n        framework\.Workload \{\n            name = "web".*?\n        \}', "",
                           main.read_text(), flags=re.S))
    demo.commit("dev: drop web")
    demo.run("env", "build", "dev", "--release", "v2", check=True)

    async def scenario() -> None:
        app = _app(demo)
        async with app.run_test(size=SIZE) as pilot:
            await _open_plan(app, pilot, 0)  # v2
            screen = app.screen
            text = str(screen.query_one("#plan-view").render())
            assert "STOP workload_removed" in text and "removed" in text
            assert "--acknowledge-destructive workload_removed" in str(screen.query_one("#plan-command").render())
            await pilot.press("d")
            await until_app(pilot, lambda: app.screen is not screen)
            await pilot.press("y")
            await until_app(pilot, lambda: screen.last_deploy is not None)
            assert screen.last_deploy.result.exit_code == 0, screen.last_deploy.result.refusal
            promotion = current(demo, "dev")
            assert promotion["release"] == "v2" and set(promotion["images"]) == {"api"}

    asyncio.run(scenario())


def test_release_list_command_lists_newest_first(demo) -> None:  # type: ignore[no-untyped-def]
    """Every screen action has a command: `framework release list` lists the releases the Plans
    screen offers, newest first, over the same engine function."""
    two_releases(demo)
    code, doc = demo.json("release", "list")
    assert code == 0 and [r["version"] for r in doc["releases"]] == ["v2", "v1"]
    assert doc["releases"][0]["workloads"] == ["api", "web"] and len(doc["releases"][0]["commit"]) == 40
    assert demo.run("release", "list").stdout.splitlines()[0].startswith("v2 ")


def test_hosted_environment_plan_says_the_control_plane_is_unreachable(demo) -> None:  # type: ignore[no-untyped-def]
    """docs/reference-deploy.md#env-deploy exit 2: a hosted environment cannot be planned without a control
    plane; the screen says so, nothing is written, and `d` has no plan to confirm."""
    demo.run("env", "build", "dev", "--release", "v1", check=True)

    async def scenario() -> None:
        app = _app(demo)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("3")
            await until_app(pilot, lambda: app.current_mode == "plans" and app.screen.loads >= 1)
            screen = app.screen
            await pilot.press("enter", "enter")  # cloud, cluster, dev, prod, staging -> cloud; release v1
            await until_app(pilot, lambda: "Cannot plan" in str(screen.query_one("#plan-view").render()))
            assert "control plane unreachable" in str(screen.query_one("#plan-view").render())
            await pilot.press("d")
            assert app.screen is screen and screen.plan_result is None
            code, where = demo.json("release", "where", "v1")
            assert code == 1 and where["environments"] == []  # bound nowhere: nothing was promoted

    asyncio.run(scenario())
