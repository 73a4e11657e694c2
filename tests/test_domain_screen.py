"""The dashboard's Domains view (docs/reference-domains.md#dashboard; domain states:
docs/reference-domains.md#states): opened from an environment's detail, against a real control plane
verifying against a real authoritative DNS server."""

from __future__ import annotations

import asyncio

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from screens.environments.detail import EnvironmentDetailScreen
from screens.environments.domains import DomainsScreen
from tests.deploy_fixtures import Demo
from tests.domain_fixtures import Zone, domain_org_in_store, publish_claim, quiet_plane, zone  # noqa: F401
from tests.hosted_fixtures import demo, hosted_env, run_json, with_token  # noqa: F401
from tests.screen_fixtures import SIZE, environ
from tests.waiting import until_app
from tests.webhooks_fixtures import Server, server_factory  # noqa: F401


def test_domains_view_shows_state_binding_dns_and_runs_actions(quiet_plane: Server, zone: Zone,  # noqa: F811
                                                                demo: Demo) -> None:  # noqa: F811
    """docs/reference-domains.md#dashboard: the Domains view lists each domain's state, binding, DNS to publish and last
    verification with the command lines of add/verify/bind/unbind/rm; `v` verifies the selected
    domain (pending_dns -> live once the zone carries its records), `u` unbinds it (still live),
    `x` removes it."""
    env = with_token(demo, domain_org_in_store(quiet_plane, "acme"))
    hosted_env(demo, quiet_plane.url)
    code, doc = run_json(demo, env, "domain", "add", "shop.test", "--env", "cloud")
    assert code == 0
    run_json(demo, env, "domain", "bind", "shop.test", "--env", "cloud", "--target", "api")

    async def scenario() -> None:
        with environ(env):
            app = Dashboard(project_dir=demo.root, settings=deterministic_settings())
            async with app.run_test(size=SIZE) as pilot:
                detail = EnvironmentDetailScreen("cloud")
                await app.push_screen(detail)
                await pilot.press("d")
                await until_app(pilot, lambda: isinstance(app.screen, DomainsScreen) and app.screen.loads >= 1)
                screen = app.screen
                table = screen.query_one("#domains-table")
                row = table.get_row("shop.test")
                assert row[1:4] == ["pending_dns", "no", "cloud/api"]
                assert "TXT _platform-challenge.shop.test platform-verify=" in row[4]
                commands = str(screen.query_one("#domains-commands").render())
                for line in ("framework domain add <hostname> --env cloud",
                             "framework domain verify shop.test --env cloud",
                             "framework domain bind shop.test --env cloud --target <workload or frontend>",
                             "framework domain unbind shop.test --env cloud",
                             "framework domain rm shop.test --env cloud"):
                    assert line in commands
                await pilot.press("v")
                await until_app(pilot, lambda: "verify shop.test" in screen.last_action)
                await until_app(pilot, lambda: "NXDOMAIN" in table.get_row("shop.test")[5])
                publish_claim(zone, doc["result"])
                await pilot.press("v")
                await until_app(pilot, lambda: table.get_row("shop.test")[1] == "live")
                assert table.get_row("shop.test")[2] == "yes"
                await pilot.press("u")
                await until_app(pilot, lambda: table.get_row("shop.test")[3] == "-")
                assert table.get_row("shop.test")[1:3] == ["live", "no"]
                await pilot.press("x")
                await until_app(pilot, lambda: table.row_count == 0)

    asyncio.run(scenario())


def test_domains_view_adds_and_binds_through_its_input(quiet_plane: Server, zone: Zone,  # noqa: F811
                                                       demo: Demo) -> None:  # noqa: F811
    """The Domains view runs add and bind (docs/reference-domains.md#dashboard) as `framework domain add` /
    `bind` do (docs/reference-domains.md#commands: `--target <workload or frontend>` or
    `--redirect-to <hostname>`, replacing any binding): `a` opens an input showing the equivalent
    `framework domain add` line as the hostname is typed and claims it on the control plane (pending_dns);
    `b` binds the selected domain to a target, `t` replaces that with a 308 redirect; escape closes the
    input without running anything."""
    env = with_token(demo, domain_org_in_store(quiet_plane, "acme"))
    hosted_env(demo, quiet_plane.url)

    async def scenario() -> None:
        with environ(env):
            app = Dashboard(project_dir=demo.root, settings=deterministic_settings())
            async with app.run_test(size=SIZE) as pilot:
                screen = DomainsScreen("cloud")
                await app.push_screen(screen)
                await until_app(pilot, lambda: screen.loads >= 1)
                table = screen.query_one("#domains-table")
                preview = screen.query_one("#domains-preview")
                assert table.row_count == 0 and not preview.display
                await pilot.press("a")
                await pilot.press(*"shop.test")
                assert "runs: framework domain add shop.test --env cloud" in str(preview.render())
                await pilot.press("enter")
                await until_app(pilot, lambda: table.row_count == 1)
                assert table.get_row("shop.test")[1:4] == ["pending_dns", "no", "-"]
                assert not preview.display

                await pilot.press("b")
                await pilot.press(*"api")
                assert "runs: framework domain bind shop.test --env cloud --target api" in str(preview.render())
                await pilot.press("enter")
                await until_app(pilot, lambda: table.get_row("shop.test")[3] == "cloud/api")

                await pilot.press("t")
                await pilot.press(*"www.shop.test")
                assert ("runs: framework domain bind shop.test --env cloud --redirect-to www.shop.test"
                        in str(preview.render()))
                await pilot.press("enter")
                await until_app(pilot, lambda: table.get_row("shop.test")[3] == "308 -> www.shop.test")

                await pilot.press("a")
                await pilot.press(*"nope.test")
                await pilot.press("escape")  # cancels: nothing claimed, the view stays
                assert app.screen is screen and not preview.display

    code, doc = run_json(demo, env, "domain", "ls", "--env", "cloud")
    assert [d["hostname"] for d in doc["result"]["domains"]] == []
    asyncio.run(scenario())
    code, doc = run_json(demo, env, "domain", "ls", "--env", "cloud")  # the control plane, not the view
    assert code == 0 and [(d["hostname"], d["binding"]) for d in doc["result"]["domains"]] == [
        ("shop.test", {"redirect_to": "www.shop.test"})]


def test_domains_view_is_in_the_screen_catalog_and_chooses_an_environment(quiet_plane: Server,  # noqa: F811
                                                                          zone: Zone, demo: Demo) -> None:  # noqa: F811
    """The Domains view (docs/reference-domains.md#dashboard) and the dashboard's catalog (every view by its
    number key): `9` opens Domains without an environment's detail; it reads the control plane of the first environment
    that has one (local and self-managed environments without a control plane are not offered) and `e`
    moves to the next, its command lines following."""
    env = with_token(demo, domain_org_in_store(quiet_plane, "acme"))
    hosted_env(demo, quiet_plane.url)
    hosted_env(demo, quiet_plane.url, name="edge")
    code, _ = run_json(demo, env, "domain", "add", "shop.test", "--env", "cloud")
    assert code == 0

    async def scenario() -> None:
        with environ(env):
            app = Dashboard(project_dir=demo.root, settings=deterministic_settings())
            async with app.run_test(size=SIZE) as pilot:
                await pilot.press("9")
                await until_app(pilot, lambda: isinstance(app.screen, DomainsScreen) and app.screen.loads >= 1)
                screen = app.screen
                assert app.current_mode == "domains" and screen.env_name == "cloud"
                assert screen.choices == ("cloud", "edge")  # the demo's local environments are not offered
                table = screen.query_one("#domains-table")
                assert table.get_row("shop.test")[1] == "pending_dns"
                assert "e: next environment; also edge" in str(screen.query_one("#domains-env").render())
                await pilot.press("e")
                await until_app(pilot, lambda: screen.env_name == "edge" and screen.loads >= 2)
                commands = str(screen.query_one("#domains-commands").render())
                assert "framework domain verify shop.test --env edge" in commands
                await pilot.press("escape")  # the catalog's screen stays (nothing to go back to)
                assert app.screen is screen

    asyncio.run(scenario())
