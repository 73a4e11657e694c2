"""Webhook ingestion against a real `platform server` on 127.0.0.1
(docs/reference-webhooks.md#webhook-ingestion: ways in, statuses, limits)."""

from __future__ import annotations

import fcntl
import functools
import json
import os
import sqlite3
from pathlib import Path

import httpx
import pytest

from tests.waiting import until
from tests.webhooks_fixtures import Server, history, make_trigger, module_server_factory, server_factory  # noqa: F401

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def server(module_server_factory) -> Server:  # noqa: F811
    """One server for the module's tests; each test has its own automation, so its history is its own."""
    return module_server_factory()


def _same_404(responses: list[httpx.Response]) -> None:
    shapes = [
        (r.status_code, r.content, sorted((k, v) for k, v in r.headers.items() if k != "date"))
        for r in responses
    ]
    assert shapes[0][0] == 404
    assert all(shape == shapes[0] for shape in shapes), shapes


def test_token_in_path_and_bearer_accept_and_run_reads_payload(server, tmp_path: Path) -> None:
    """Ways in: token in path or `Authorization: Bearer` -> 202; the run starts
    asynchronously and reads trigger.payload."""
    act = make_trigger(server, tmp_path, "ways-in")
    r1 = httpx.post(act["url_with_token"], json={"ref": "main"})
    r2 = httpx.post(act["url"], json={"ref": "dev"}, headers={"Authorization": f"Bearer {act['token']}"})
    assert (r1.status_code, r2.status_code) == (202, 202)

    def succeeded() -> list[dict]:
        runs = [d for d in history(server, "ways-in") if d["run"] and d["run"]["status"] == "succeeded"]
        return runs if len(runs) == 2 else []

    done = until(succeeded, what="two runs")
    assert {d["auth_method"] for d in done} == {"path", "bearer"}
    record = json.loads((server.data_dir / "runs" / done[0]["run"]["id"] / "run.json").read_text())
    texts = {step["data"].get("text") for step in record["steps"]}
    assert texts & {"ref=main", "ref=dev"}


def test_one_identical_404_for_unknown_trigger_wrong_token_and_bad_signature(server, tmp_path: Path) -> None:
    """Authentication rules: wrong token, unknown trigger and bad signature all produce the
    identical 404 response (status, body and headers)."""
    act = make_trigger(server, tmp_path, "identical-404", "signed", {"hmac": {}}, secret="s3cret")
    base = act["url"].rsplit("/", 1)[0]
    responses = [
        httpx.post(f"{base}/trg_0000000000000000", content=b"{}"),
        httpx.post(f"{base}/trg_0000000000000000/{act['token']}", content=b"{}"),
        httpx.post(f"{base}/not-a-trigger-id", content=b"{}"),
        httpx.post(act["url"] + "/whk_wrong", content=b"{}"),
        httpx.post(act["url"], content=b"{}", headers={"Authorization": "Bearer whk_wrong"}),
        httpx.post(act["url"], content=b"{}"),
        httpx.post(act["url"], content=b"{}", headers={"X-Signature-256": "00" * 32}),
        httpx.post(act["url"], content=b"{}", headers={"X-Signature-256": "not hex at all"}),
    ]
    _same_404(responses)
    assert history(server, "identical-404") == []


def test_disabled_trigger_409_only_after_authentication(server, tmp_path: Path) -> None:
    """States: a delivery to a disabled trigger gets 409 - once authentication passed; a wrong
    token still gets the 404. The refusal is recorded in history."""
    act = make_trigger(server, tmp_path, "disabled")
    assert server.cli_json("trigger", "disable", "disabled", "ci")["enabled"] is False
    assert httpx.post(act["url_with_token"], content=b"x").status_code == 409
    assert httpx.post(act["url"] + "/whk_wrong", content=b"x").status_code == 404
    [refused] = history(server, "disabled")
    assert (refused["status_code"], refused["outcome"], refused["run"]) == (409, "refused", None)
    assert server.cli_json("trigger", "enable", "disabled", "ci")["enabled"] is True
    assert httpx.post(act["url_with_token"], content=b"y").status_code == 202


def test_body_over_1_mib_is_413_counted_on_bytes_read(server, tmp_path: Path) -> None:
    """Limits: webhook body 1 MiB max -> 413, by Content-Length or by bytes actually read from a
    chunked body without Content-Length; exactly 1 MiB is accepted."""
    act = make_trigger(server, tmp_path, "limits")

    def chunked(total: int):
        sent = 0
        while sent < total:
            n = min(64 * 1024, total - sent)
            sent += n
            yield b"a" * n

    assert httpx.post(act["url_with_token"], content=b"a" * (MIB + 1)).status_code == 413
    big = httpx.post(act["url_with_token"], content=chunked(MIB + 10))
    assert big.status_code == 413 and "content-length" not in big.request.headers
    assert httpx.post(f"{act['url']}/whk_wrong", content=chunked(MIB + 10)).status_code == 413
    assert httpx.post(act["url_with_token"], content=chunked(MIB)).status_code == 202
    codes = sorted(d["status_code"] for d in history(server, "limits"))
    assert codes == [202, 413, 413]  # the wrong-token 413 is not recorded: it authenticated nothing


def test_rotate_kills_old_token_at_once(server, tmp_path: Path) -> None:
    """States: rotate -> the old token stops working immediately; the new one works."""
    act = make_trigger(server, tmp_path, "rotate")
    rotated = server.cli_json("trigger", "rotate", "rotate", "ci")
    assert rotated["token"] != act["token"]
    assert httpx.post(act["url_with_token"], content=b"1").status_code == 404
    assert (
        httpx.post(act["url"], content=b"2", headers={"Authorization": f"Bearer {act['token']}"}).status_code
        == 404
    )
    assert httpx.post(rotated["url_with_token"], content=b"3").status_code == 202


def test_503_when_the_delivery_cannot_be_recorded(server_factory, tmp_path: Path) -> None:
    """Errors: 503 when the delivery could not be recorded (so the sender retries); nothing is
    half-written, and the same delivery is accepted once the store is writable again. On SQLite a
    delivery is recorded first in the delivery journal (docs/reference-webhooks.md#durability-and-processes):
    its lock held elsewhere past the busy timeout is the store not writable; without the journal,
    SQLite's own lock is."""
    for journal, store_file in (("1", "journal/lock"), ("0", "platform.db")):
        srv = server_factory(
            data_dir=tmp_path / f"data-{journal}",
            extra_env={"PLATFORM_DB_BUSY_TIMEOUT_MS": "300", "PLATFORM_DELIVERY_JOURNAL": journal},
        )
        act = make_trigger(srv, tmp_path)
        if journal == "1":
            # the recorder opens the journal once warm, which may come after the first answers
            lock_file = srv.data_dir / store_file
            until(lock_file.exists, what="the recorder to open the journal")
            held = os.open(srv.data_dir / store_file, os.O_RDWR)
            fcntl.flock(held, fcntl.LOCK_EX)
            release = functools.partial(os.close, held)
        else:
            lock = sqlite3.connect(srv.data_dir / store_file, isolation_level=None)
            lock.execute("BEGIN EXCLUSIVE")
            release = lock.close  # (rolls back)
        try:
            refused = httpx.post(act["url_with_token"], content=b"payload", timeout=30)
        finally:
            release()
        assert refused.status_code == 503 and refused.headers["retry-after"]
        assert history(srv) == []
        assert httpx.post(act["url_with_token"], content=b"payload").status_code == 202
        assert len(history(srv)) == 1
        srv.stop()


def test_stored_payload_is_json_dumps_compact_and_body_parsing_is_json_loads() -> None:
    """`trigger.payload` (docs/reference-webhooks.md#webhook-ingestion): the body is parsed JSON,
    else the raw text, and the stored payload is exactly `json.dumps(payload, separators=(",", ":"))`
    (the recorder's encoder is built once; its output must not differ by a byte); the scrubbed
    headers keep lower-cased names, join repeated ones and drop secret-carrying ones."""
    from engine.hooks.payload import COMPACT, build_payload, parse_body, scrub_headers

    bodies = [
        b'{"ref": "main", "n": 1}',
        b' [1, 2.5, -0.0, 1e300, 123456789012345678901234567890, null, true] ',
        b'{"s": "\\u00e9\\u2028 \\" \\\\ \\n \\u0000", "nested": {"a": [{}, []]}}',
        b"NaN",
        b"[Infinity, -Infinity]",
        "\ufeff{}".encode(),  # a UTF-8 BOM: not JSON for json.loads either
        b"{} {}",  # extra data
        b"plain text \xff not utf-8",
        b"",
        b"   ",
    ]
    for body in bodies:
        text = body.decode("utf-8", errors="replace")
        try:
            expected = json.loads(text)
        except ValueError:
            expected = text
        parsed = parse_body(body)
        assert json.dumps(parsed) == json.dumps(expected), body
        payload = build_payload(body, [("Content-Type", "application/json")], [("ref", "main")], "application/json")
        assert COMPACT(payload) == json.dumps(payload, separators=(",", ":")), body
    headers = [("X-Event", "push"), ("x-event", "again"), ("Authorization", "Bearer x"), ("X-Acme-Signature", "s"),
               ("X-Mine", "m"), ("Host", "h")]
    assert scrub_headers(headers, "x-mine") == {"x-event": "push, again", "host": "h"}
    assert scrub_headers(headers) == {"x-event": "push, again", "x-mine": "m", "host": "h"}


def test_the_deferred_payload_composes_to_the_stored_payload_byte_for_byte() -> None:
    """docs/reference-webhooks.md#durability-and-processes: the journal holds a payload's deferred form
    (the body as received, headers and query already scrubbed); composed when indexed it is exactly
    what the recorder without the journal stores, for any body (JSON, not JSON, not UTF-8, control
    bytes the journal uses as separators), and it is ASCII without NUL or SOH (a journal field)."""
    from engine.hooks.payload import COMPACT, DEFERRED_MARK, build_payload, deferred_payload, stored_payload

    bodies = [b'{"ref": "main", "n": 1}', b"plain text \xff not utf-8", b"", b"\x00\x01\x02 sep", b'"\\u0000"',
              "caf\u00e9 \u2028".encode(), b"[1e300, -0.0]", b"x" * 70_000]
    headers = [("X-Event", "push"), ("x-event", "again"), ("Authorization", "Bearer sekrit-1"), ("X-Mine", "sekrit-2"),
               ("Content-Type", "text/plain")]
    query = [("ref", "main"), ("ref", "dev"), ("token", "sekrit-3"), ("k", "")]
    for body in bodies:
        for configured, content_type in ((None, "application/json"), ("x-mine", None)):
            field = deferred_payload(body, headers, query, content_type, configured)
            assert field.startswith(DEFERRED_MARK) and field.isascii() and "\x00" not in field and "\x01" not in field
            expected = COMPACT(build_payload(body, headers, query, content_type, configured))
            assert stored_payload(field) == expected, (body, configured)
            assert ("sekrit-2" in expected) == (configured is None) and "sekrit-1" not in expected
    stored = COMPACT(build_payload(b"{}", [], [], "application/json"))
    assert stored_payload(stored) == stored  # a record written before the deferred form: kept as it is
