"""`filter` (docs/reference-webhooks.md#webhook-ingestion: boolean CEL expression over trigger.payload,
`has()` guards)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from engine.hooks.filters import MAX_FILTER_CHARS, FilterInvalid, compile_filter
from tests.waiting import until
from tests.webhooks_fixtures import WORKFLOW, Server, history, make_trigger, module_server_factory  # noqa: F401


@pytest.fixture(scope="module")
def srv(module_server_factory) -> Server:  # noqa: F811
    """One server for the module (filter time limit 500 ms); each test has its own automation."""
    return module_server_factory(extra_env={"PLATFORM_FILTER_TIMEOUT_MS": "500"})


def test_invalid_filter_is_refused_with_its_position(srv: Server, tmp_path: Path) -> None:
    """An invalid filter is refused when the trigger is saved, with line and column; nothing saved."""
    with pytest.raises(FilterInvalid) as caught:
        compile_filter("trigger.payload.body.action == ")
    assert (caught.value.line, caught.value.column) == (1, 32)
    with pytest.raises(FilterInvalid, match="limit"):
        compile_filter("true && " * (MAX_FILTER_CHARS // 8 + 1) + "true")
    wf = tmp_path / "wf.yaml"
    wf.write_text(WORKFLOW)
    assert srv.cli_json("automation", "create", "invalid", "--workflow", str(wf))["ok"]
    doc = srv.cli_json("trigger", "add", "invalid", "ci", "--filter", "has(trigger.payload.body.x) &&")
    assert doc["exit_code"] == 2 and doc["error"]["code"] == "invalid_filter" and doc["error"]["column"]
    listed = srv.cli_json("automation", "list")
    assert [a["triggers"] for a in listed["automations"] if a["name"] == "invalid"] == [[]]


def test_filter_decides_and_errors_count_as_no_match(srv: Server, tmp_path: Path) -> None:
    """The filter decides whether a delivery proceeds; an evaluation error (or the time limit)
    counts as "did not match" and is recorded in history."""
    opened = make_trigger(
        srv,
        tmp_path,
        "decides",
        "opened",
        filter='has(trigger.payload.body.action) && trigger.payload.body.action == "opened"',
    )
    slow = make_trigger(
        srv,
        tmp_path,
        "decides",
        "slow",
        filter=(
            "trigger.payload.body.all(x, trigger.payload.body.all(y,"
            " trigger.payload.body.all(z, x + y + z >= 0)))"
        ),
    )
    for body in ({"action": "opened"}, {"action": "closed"}, {"other": 1}, "not json"):
        kwargs = {"json": body} if not isinstance(body, str) else {"content": body.encode()}
        assert httpx.post(opened["url_with_token"], **kwargs).status_code == 202
    assert httpx.post(slow["url_with_token"], json=list(range(2000))).status_code == 202

    def settled() -> list[dict]:
        items = history(srv, "decides")
        return items if len(items) == 5 and all(d["outcome"] != "queued" for d in items) else []

    items = until(settled, what="filters to be evaluated")
    by_body = {str(d["payload"]["body"])[:20]: d for d in items}
    assert by_body["{'action': 'opened'}"]["outcome"] == "run_started"
    assert by_body["{'action': 'closed'}"]["outcome"] == "filtered_out"
    assert by_body["{'other': 1}"]["outcome"] == "filtered_out"  # has() guard: no error
    assert by_body["not json"]["outcome"] == "filter_error" and by_body["not json"]["detail"]
    timed_out = next(d for d in items if d["trigger"] == "slow")
    assert timed_out["outcome"] == "filter_error" and "time limit" in timed_out["detail"]
    assert sum(1 for d in items if d["run"]) == 1
