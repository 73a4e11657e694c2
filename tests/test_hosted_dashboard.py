"""The dashboard with a hosted environment (docs/reference-hosted.md): deployed from the Plans screen to a real
control plane; the Environments screen shows it like the others: queued with its action URL, then
phase and health once billing lets it go live, then stopped."""

from __future__ import annotations

import asyncio

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from tests.deploy_fixtures import Demo
from tests.hosted_fixtures import (  # noqa: F401
    Server,
    billing_in_store,
    demo,
    hosted_env,
    mint_in_store,
    plane,
    seed_org_in_store,
    server_factory,
)
from tests.screen_fixtures import SIZE
from tests.test_screen_environments import reload_until
from tests.waiting import until_app


def test_hosted_environment_on_the_plans_and_environments_screens(plane: Server, demo: Demo) -> None:  # noqa: F811
    """Hosted states (docs/reference-hosted.md#commands-on-hosted-environments: queued on billing, exit 7
    with the wait and action URL; goes live by itself; env stop) and status, as the dashboard shows them;
    the deploy is the Plans screen's (confirm bound to the plan digest)."""
    seed_org_in_store(plane, "beta", billing=False)
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = mint_in_store(plane, "beta")
    hosted_env(demo, plane.url)
    demo.run("env", "build", "cloud", "--release", "v1", check=True)
    action_url = f"{plane.url}/billing/beta"

    async def scenario() -> None:
        import os

        saved = dict(os.environ)
        os.environ.update(demo.env)  # the dashboard's engine calls run in this process
        try:
            app = Dashboard(project_dir=demo.root, settings=deterministic_settings(deploy_timeout=60))
            async with app.run_test(size=SIZE) as pilot:
                await pilot.press("3")
                await until_app(pilot, lambda: app.current_mode == "plans" and app.screen.loads >= 1)
                plans = app.screen
                await pilot.press("enter", "enter")  # cloud (first) -> its release v1
                await until_app(pilot, lambda: plans.plan_result is not None)
                assert plans.plan_for == ("cloud", "v1")
                await pilot.press("d")
                await until_app(pilot, lambda: app.screen is not plans)
                await pilot.press("y")
                await until_app(pilot, lambda: plans.last_deploy is not None)
                result = plans.last_deploy.result
                assert result.exit_code == 7 and result.queued["action_url"] == action_url
                assert action_url in str(plans.query_one("#deploy-log").render())
                await pilot.press("1")
                await until_app(pilot, lambda: app.current_mode == "environments" and app.screen.loads >= 1)
                screen = app.screen
                table = screen.query_one("#env-table")
                await reload_until(pilot, screen, lambda: table.get_row("cloud")[8].startswith("queued"))
                assert table.get_row("cloud")[8] == f"queued: billing {action_url}"
                billing_in_store(plane, "beta")  # what the admin command runs
                await reload_until(pilot, screen, lambda: table.get_row("cloud")[8] == "converged")
                row = table.get_row("cloud")
                assert (row[3], row[4], row[6]) == ("v1", "ready", "healthy")
                assert demo.run("env", "stop", "cloud").returncode == 0
                await reload_until(pilot, screen, lambda: table.get_row("cloud")[8] == "stopped")
        finally:
            os.environ.clear()
            os.environ.update(saved)

    asyncio.run(scenario())
