"""The Webhooks screen against a real `platform server` on 127.0.0.1
(docs/reference-webhooks.md#dashboard-webhooks-screen-key-6; activation, rotation, delivery history):
activation and rotation from the dashboard show the token once, a rotated token stops working, history pages
with the server's cursor, payloads are inspected as a tree, and a replay is recorded as a new delivery with a
new run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from engine.hooks.client import history as client_history
from screens.widgets.empty_state import EmptyState
from tests.test_dashboard import SIZE
from tests.waiting import until, until_app
from tests.webhooks_fixtures import WORKFLOW, Server, history, server, server_factory  # noqa: F401


def _setup(srv: Server, tmp_path: Path) -> None:
    """Automation + trigger through the engine calls `platform automation create` and `platform trigger add`
    make (the same client the dashboard uses; the commands themselves: tests/test_webhooks_cli.py)."""
    from engine.hooks import client
    from engine.hooks.definition import definition_from

    client.create_automation("triage", WORKFLOW, server=(srv.url, srv.token))
    client.add_trigger("triage", definition_from(None, "ci", None, False, {}), server=(srv.url, srv.token))


def _settings(srv: Server, **extra: Any) -> Any:
    return deterministic_settings(platform_server_url=srv.url, platform_token=srv.token, refresh_seconds=60, **extra)


def _texts(screen: Any) -> str:
    return "\n".join(str(w.render()) for w in screen.query("Static"))


def _tree_labels(node: Any) -> list[str]:
    out = [str(node.label)]
    for child in node.children:
        out.extend(_tree_labels(child))
    return out


def test_webhooks_flow_activate_deliver_inspect_replay_rotate(server: Server, tmp_path: Path,  # noqa: F811
        demo_project: Path) -> None:
    """docs/reference-webhooks.md#commands: activation shows URL and token once (copyable, not kept after the
    modal closes); a delivery is in history with what it did; its payload is a JSON tree; a replay is a new
    delivery and a new run; after rotation the OLD token gets 404 from the real server."""
    _setup(server, tmp_path)

    async def scenario() -> None:
        from screens.webhooks.history import WebhookHistoryScreen, short_key
        from screens.webhooks.payload import PayloadModal
        from screens.webhooks.token import TokenModal

        app = Dashboard(project_dir=demo_project, settings=_settings(server))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("6")
            await until_app(pilot, lambda: app.current_mode == "webhooks" and app.screen.loads >= 1)
            hooks = app.screen
            table = hooks.query_one("#hooks-table")
            assert [k.value for k in table.rows] == ["triage/ci"]
            assert table.get_cell("triage/ci", "state") == "not activated"
            assert "platform trigger activate triage ci" in _texts(hooks)

            await pilot.press("a")
            await until_app(pilot, lambda: isinstance(app.screen, TokenModal))
            modal = app.screen
            token = modal._token
            assert token and token.startswith("whk_") and token in _texts(modal)
            await pilot.press("c")
            assert app.clipboard == token
            await pilot.press("escape")
            await until_app(pilot, lambda: app.screen is hooks and table.get_cell("triage/ci", "state") == "enabled")
            assert modal._token is None and token not in _texts(hooks) and token not in _texts(modal)

            url = table.get_cell("triage/ci", "url")
            sent = httpx.post(url, json={"ref": "main"}, headers={"Authorization": f"Bearer {token}"}, timeout=30)
            assert sent.status_code == 202
            until(lambda: [d for d in history(server) if d["run"] and d["run"]["status"] == "succeeded"],
                     what="the delivery's run")

            await pilot.press("enter")
            await until_app(pilot, lambda: isinstance(app.screen, WebhookHistoryScreen) and app.screen.loads >= 1)
            hist = app.screen
            [original] = hist.page.deliveries
            rows = hist.query_one("#history-table")
            assert rows.get_cell(original.id, "did") == "run_started"
            assert rows.get_cell(original.id, "run").endswith("succeeded")
            assert original.dedupe_key and rows.get_cell(original.id, "dedupe") == short_key(original.dedupe_key)
            assert original.dedupe_key in _texts(hist)
            assert rows.get_cell(original.id, "filter") == "no filter"
            assert f"platform trigger replay triage {original.id}" in _texts(hist)

            await pilot.press("enter")
            await until_app(pilot, lambda: isinstance(app.screen, PayloadModal))
            labels = _tree_labels(app.screen.query_one("#payload-tree").root)
            assert 'ref: "main"' in labels and token not in "\n".join(labels)
            await pilot.press("escape")
            await until_app(pilot, lambda: app.screen is hist)

            await pilot.press("R")
            await until_app(pilot, lambda: hist.replays >= 1 and hist.loads >= 2)
            replays = until(
                lambda: [d for d in history(server) if d["auth_method"] == "replay" and d["run"]
                         and d["run"]["status"] == "succeeded"], what="the replay's run")
            assert replays[0]["detail"] == f"replay of {original.id}"
            assert replays[0]["run"]["id"] != original.run.id and len(history(server)) == 2

            await pilot.press("escape")
            await until_app(pilot, lambda: app.screen is hooks)
            await pilot.press("o")
            await until_app(pilot, lambda: isinstance(app.screen, TokenModal))
            new_token = app.screen._token
            assert new_token and new_token != token
            await pilot.press("escape")
            await until_app(pilot, lambda: app.screen is hooks)
            old = httpx.post(url, json={"ref": "x"}, headers={"Authorization": f"Bearer {token}"}, timeout=30)
            assert old.status_code == 404
            new = httpx.post(url, json={"ref": "y"}, headers={"Authorization": f"Bearer {new_token}"}, timeout=30)
            assert new.status_code == 202

            await pilot.press("e")
            await until_app(pilot, lambda: table.get_cell("triage/ci", "state") == "disabled")
            off = httpx.post(url, json={"ref": "z"}, headers={"Authorization": f"Bearer {new_token}"}, timeout=30)
            assert off.status_code == 409

    asyncio.run(scenario())


def test_history_pages_with_the_server_cursor(server: Server, tmp_path: Path,  # noqa: F811
        demo_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-webhooks.md#dashboard-webhooks-screen-key-6: history is paged with next_before (one page
    loaded at a time); the CLI's --before walks the same pages; the last page has an empty cursor."""
    import screens.webhooks.history as module

    _setup(server, tmp_path)
    activation = server.cli_json("trigger", "activate", "triage", "ci")
    for n in range(5):
        r = httpx.post(activation["url_with_token"], json={"n": n}, headers={"X-Request-Id": f"req-{n}"}, timeout=30)
        assert r.status_code == 202
    first = server.cli_json("trigger", "history", "triage", "ci", "--limit", "2")
    second = server.cli_json("trigger", "history", "triage", "ci", "--limit", "2", "--before", first["next_before"])
    third = server.cli_json("trigger", "history", "triage", "ci", "--limit", "2", "--before", second["next_before"])
    seen = [d["payload"]["body"]["n"] for page in (first, second, third) for d in page["deliveries"]]
    assert seen == [4, 3, 2, 1, 0] and third["next_before"] == ""
    bad = server.cli_json("trigger", "history", "triage", "ci", "--before", "nonsense")
    assert bad["exit_code"] == 2
    monkeypatch.setattr(module, "PAGE", 2)

    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=_settings(server))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("6")
            await until_app(pilot, lambda: app.current_mode == "webhooks" and app.screen.loads >= 1)
            await pilot.press("enter")
            await until_app(pilot,
                            lambda: isinstance(app.screen, module.WebhookHistoryScreen) and app.screen.loads >= 1)
            hist = app.screen

            def keys() -> list[int]:
                return [d.payload["body"]["n"] for d in hist.page.deliveries]

            assert keys() == [4, 3]
            await pilot.press("n")
            await until_app(pilot, lambda: hist.loads >= 2)
            assert keys() == [2, 1] and "--before " in str(hist.query_one("#history-status").render())
            await pilot.press("n")
            await until_app(pilot, lambda: hist.loads >= 3)
            assert keys() == [0] and "last page" in str(hist.query_one("#history-status").render())
            await pilot.press("p")
            await until_app(pilot, lambda: hist.loads >= 4)
            assert keys() == [2, 1]

    asyncio.run(scenario())
    page = client_history("triage", "ci", 2, server=(server.url, server.token))
    assert len(page.deliveries) == 2 and page.next_before


def test_webhooks_screen_without_a_server_names_platform_server(demo_project: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Honest empty states (docs/reference-webhooks.md#dashboard-webhooks-screen-key-6): no server configured,
    or one that is not reachable, names `platform server` and the variables to set."""
    monkeypatch.delenv("PLATFORM_SERVER_URL", raising=False)
    monkeypatch.delenv("PLATFORM_TOKEN", raising=False)

    async def scenario(settings: Any, reason: str) -> None:
        app = Dashboard(project_dir=demo_project, settings=settings)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("6")
            await until_app(pilot, lambda: app.current_mode == "webhooks" and app.screen.loads >= 1)
            empty = app.screen.query_one("#hooks-empty", EmptyState)
            assert empty.display and not app.screen.query_one("#hooks-table").display
            text = _texts(empty)
            assert "platform server" in text and "PLATFORM_SERVER_URL" in text and "PLATFORM_TOKEN" in text
            assert reason in str(app.screen.query_one("#hooks-status").render())

    asyncio.run(scenario(deterministic_settings(), "PLATFORM_SERVER_URL is not set"))
    asyncio.run(scenario(deterministic_settings(platform_server_url="http://127.0.0.1:1", platform_token="plt_x"),
                         "cannot reach"))


def test_replay_command_and_refusals(server: Server, tmp_path: Path) -> None:  # noqa: F811
    """`platform trigger replay`: a new delivery recorded as a replay; unknown delivery is 1
    (not_found); a disabled trigger refuses (conflict)."""
    _setup(server, tmp_path)
    activation = server.cli_json("trigger", "activate", "triage", "ci")
    assert httpx.post(activation["url_with_token"], json={"ref": "a"}, timeout=30).status_code == 202
    [first] = until(lambda: [d for d in history(server) if d["run"]], what="first run")
    replayed = server.cli_json("trigger", "replay", "triage", first["id"])
    assert replayed["ok"] and replayed["id"] != first["id"] and replayed["detail"] == f"replay of {first['id']}"
    human = server.cli("trigger", "replay", "triage", first["id"])
    assert human.returncode == 0 and "replayed" in human.stdout
    missing = server.cli_json("trigger", "replay", "triage", "dlv_nope")
    assert missing["exit_code"] == 1 and missing["error"]["code"] == "not_found"
    assert server.cli("trigger", "disable", "triage", "ci").returncode == 0
    refused = server.cli_json("trigger", "replay", "triage", first["id"])
    assert refused["exit_code"] == 1 and refused["error"]["code"] == "conflict"
    runs = until(lambda: [d for d in history(server) if d["run"] and d["run"]["status"] == "succeeded"
                             and d["auth_method"] == "replay"] if len(history(server)) == 3 else None,
                    what="both replays' runs")
    assert len({d["run"]["id"] for d in history(server) if d["run"]}) == 3 and len(runs) >= 1
