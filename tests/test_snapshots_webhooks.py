"""Snapshots of the Webhooks screen, its delivery history and the token modal, with data from a
real `platform server` (docs/reference-webhooks.md#dashboard-webhooks-screen-key-6). Fixed terminal size,
deterministic settings; the public URL is pinned with PLATFORM_PUBLIC_URL, and random ids, tokens, hashes and
times are hidden."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from tests.waiting import settle_layout, until
from tests.webhooks_fixtures import WORKFLOW, Server, history, module_server_factory  # noqa: F401

SIZE = (140, 36)
PUBLIC = "https://hooks.example.test"
VOLATILE = [
    (re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+Z"), "<time>"),
    (re.compile(r"\b(dlv|run|trg)_[0-9a-f]+"), r"\1_<id>"),
    (re.compile(r"whk_[A-Za-z0-9_-]+"), "whk_<token shown once>"),
    (re.compile(r"key:[0-9a-f]{16,}"), "key:<hash>"),
]


def _mask(text: str) -> str:
    for pattern, repl in VOLATILE:
        text = pattern.sub(repl, text)
    return text


async def _hide_volatile(pilot: Any) -> None:
    """Rewrite every table cell and static text of the active screen with ids/times hidden."""
    screen = pilot.app.screen
    for table in screen.query("DataTable"):
        columns = [(key.value, column.label) for key, column in table.columns.items()]
        rows = [(key.value, [_mask(str(c)) for c in table.get_row(key)]) for key in list(table.rows)]
        table.clear(columns=True)
        for key, label in columns:
            table.add_column(label, key=key)
        for key, cells in rows:
            table.add_row(*cells, key=key)
    # The re-added rows' highlight events rewrite hint lines some time later (later still on a loaded
    # machine): mask, let layout settle, and repeat until a pass finds nothing left to mask.
    # Every static is rewritten as plain text on the first pass (the snapshots were taken so).
    for attempt in range(50):
        await settle_layout(pilot)
        changed = False
        for static in screen.query("Static"):
            text = str(static.render())
            if attempt == 0 or _mask(text) != text:
                static.update(_mask(text))
                changed = changed or _mask(text) != text
        if not changed:
            await settle_layout(pilot)
            return
    raise AssertionError("volatile text kept reappearing")


@pytest.fixture(scope="module")
def populated(module_server_factory) -> Server:  # noqa: F811
    """triage/ci activated with three deliveries (one a retry) whose runs finished; triage/github
    (HMAC, not activated); triage/nightly activated then disabled. One server for the module: the
    screens shown do not change it (the token modal's rotation changes no text the others show).
    Set up with the engine calls the `platform automation`/`trigger` commands make (those commands
    are tested in tests/test_webhooks_cli.py)."""
    from engine.hooks import client
    from engine.hooks.definition import definition_from

    srv = module_server_factory(extra_env={"PLATFORM_PUBLIC_URL": PUBLIC})
    at = (srv.url, srv.token)
    client.create_automation("triage", WORKFLOW, server=at)
    for name, filter_, hmac in (("ci", "has(trigger.payload.body.ref)", {}),
                                ("github", None, {"header": "X-Hub-Signature-256", "prefix": "sha256="}),
                                ("nightly", None, {})):
        client.add_trigger("triage", definition_from(None, name, filter_, False, hmac), server=at)
    ci = client.activate("triage", "ci", None, server=at)
    client.activate("triage", "nightly", None, server=at)
    client.set_enabled("triage", "nightly", False, server=at)
    target = ci.url_with_token.replace(PUBLIC, srv.url)
    for body, request_id in (({"ref": "main"}, "a"), ({"ref": "main"}, "a"), ({"other": 1}, "b")):
        assert httpx.post(target, json=body, headers={"X-Request-Id": request_id}, timeout=30).status_code == 202
    until(lambda: all(d["outcome"] in ("run_started", "retry", "filtered_out") and
                         (d["run"] is None or d["run"]["status"] == "succeeded") for d in history(srv))
             and len(history(srv)) == 3, what="every delivery processed")
    return srv


def _app(srv: Server) -> Dashboard:
    return Dashboard(settings=deterministic_settings(platform_server_url=srv.url, platform_token=srv.token,
                                                     refresh_seconds=3600))


async def _open_webhooks(pilot: Any) -> None:
    from tests.waiting import until_app

    app = pilot.app
    await pilot.press("6")
    await until_app(pilot, lambda: app.current_mode == "webhooks" and app.screen.loads >= 1)
    await app.workers.wait_for_complete()
    await pilot.pause()


def test_webhooks_screen_layout(snap_compare: Any, populated: Server, demo_project: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-webhooks.md#dashboard-webhooks-screen-key-6: triggers with state (enabled, disabled, not
    activated), auth, filter, URL."""
    monkeypatch.chdir(demo_project)

    async def run_before(pilot: Any) -> None:
        await _open_webhooks(pilot)
        await _hide_volatile(pilot)

    assert snap_compare(_app(populated), terminal_size=SIZE, run_before=run_before)


def _then(key: str, ready: Any) -> Any:
    """run_before: open Webhooks, press `key`, wait for `ready(screen)`, hide volatile text."""

    async def run_before(pilot: Any) -> None:
        from tests.waiting import until_app

        await _open_webhooks(pilot)
        await pilot.press(key)
        await until_app(pilot, lambda: ready(pilot.app.screen))
        await pilot.app.workers.wait_for_complete()
        await _hide_volatile(pilot)

    return run_before


def test_webhook_history_layout(snap_compare: Any, populated: Server, demo_project: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-webhooks.md#webhook-ingestion (history): each delivery with status, what it did,
    de-duplication key, filter outcome, run."""
    from screens.webhooks.history import WebhookHistoryScreen

    monkeypatch.chdir(demo_project)
    ready = _then("enter", lambda s: isinstance(s, WebhookHistoryScreen) and s.loads >= 1)
    assert snap_compare(_app(populated), terminal_size=SIZE, run_before=ready)


def test_token_modal_layout(snap_compare: Any, populated: Server, demo_project: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-webhooks.md#commands (rotate): the rotated token and URL shown once, with copy keys and
    the equivalent command."""
    from screens.webhooks.token import TokenModal

    monkeypatch.chdir(demo_project)
    ready = _then("o", lambda s: isinstance(s, TokenModal))
    assert snap_compare(_app(populated), terminal_size=SIZE, run_before=ready)
