"""De-duplication and `trigger.payload` (docs/reference-webhooks.md#webhook-ingestion) against a real server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from engine.hooks.payload import build_payload, dedupe_key
from tests.waiting import until
from tests.webhooks_fixtures import Server, history, make_trigger, module_server_factory  # noqa: F401


@pytest.fixture(scope="module")
def server(module_server_factory) -> Server:  # noqa: F811
    """One server for the module's tests; each test has its own automation, so its history is its own."""
    return module_server_factory()


def _outcomes(srv, automation: str) -> list[str]:
    return sorted(d["outcome"] for d in history(srv, automation))


def test_each_key_header_makes_a_retry_that_starts_no_run(server, tmp_path: Path) -> None:
    """The key is the first present of Idempotency-Key, X-Idempotency-Key, X-Request-Id,
    X-Delivery-Id; a retry is recorded but never starts a second run."""
    act = make_trigger(server, tmp_path, "key-headers")
    for n, header in enumerate(("Idempotency-Key", "X-Idempotency-Key", "X-Request-Id", "X-Delivery-Id")):
        first = httpx.post(act["url_with_token"], content=f"a{n}".encode(), headers={header: f"k{n}"})
        again = httpx.post(act["url_with_token"], content=f"b{n}".encode(), headers={header: f"k{n}"})
        assert (first.status_code, again.status_code) == (202, 202)
        assert again.json()["duplicate_of"] == first.json()["delivery"]
    # First present wins: same Idempotency-Key, different X-Request-Id -> still a retry.
    r = httpx.post(
        act["url_with_token"], content=b"c", headers={"Idempotency-Key": "k0", "X-Request-Id": "new"}
    )
    assert r.json()["status"] == "retry"
    until(lambda: "queued" not in _outcomes(server, "key-headers"), what="runs to start")
    outcomes = _outcomes(server, "key-headers")
    assert outcomes.count("run_started") == 4 and outcomes.count("retry") == 5
    assert sum(1 for d in history(server, "key-headers") if d["run"]) == 4


def test_identical_body_within_the_minute_is_a_retry(server, tmp_path: Path) -> None:
    """With no key header, an identical body within the same minute is a retry; another body is not."""
    act = make_trigger(server, tmp_path, "same-body")
    a = httpx.post(act["url_with_token"], json={"n": 1}).json()
    b = httpx.post(act["url_with_token"], json={"n": 1}).json()
    c = httpx.post(act["url_with_token"], json={"n": 2}).json()
    if b["status"] != "retry":  # the two fell on both sides of a minute boundary: send once more
        b = httpx.post(act["url_with_token"], json={"n": 1}).json()
        a = {"delivery": b.get("duplicate_of") or a["delivery"]}
    assert b["status"] == "retry" and b["duplicate_of"] == a["delivery"]
    assert c["status"] == "accepted"
    assert (
        dedupe_key({}, b"x", 60_000_000)
        == dedupe_key({}, b"x", 119_999_999)
        != dedupe_key({}, b"x", 120_000_000)
    )


def test_simultaneous_copies_start_one_run(server, tmp_path: Path) -> None:
    """A retry never starts a second run, also when the copies arrive at the same moment."""
    act = make_trigger(server, tmp_path, "copies")

    async def burst() -> list[dict]:
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=30)) as client:
            rs = await asyncio.gather(
                *(
                    client.post(act["url_with_token"], content=b"same", headers={"X-Delivery-Id": "d-1"})
                    for _ in range(30)
                )
            )
        return [r.json() for r in rs]

    answers = asyncio.run(burst())
    assert sum(1 for a in answers if a["status"] == "accepted") == 1
    assert len(history(server, "copies")) == 30
    until(lambda: "queued" not in _outcomes(server, "copies"), what="the run to start")
    assert sum(1 for d in history(server, "copies") if d["run"]) == 1


def test_payload_scrubs_secret_headers_and_query_and_keeps_the_rest(server, tmp_path: Path) -> None:
    """trigger.payload: body (JSON, else raw text), headers and query with secret-carrying entries
    removed (Authorization, Cookie, X-Gitlab-Token, signature headers, the configured header;
    token, secret, key, api_key, sig, signature, access_token), content_type."""
    act = make_trigger(server, tmp_path, "scrub", "ci", {"hmac": {"header": "X-Acme-Check"}}, secret="k")
    httpx.post(
        act["url"],
        params={
            "token": "t1",
            "secret": "s1",
            "key": "k1",
            "api_key": "a1",
            "sig": "g1",
            "signature": "g2",
            "access_token": "x1",
            "ref": "main",
        },
        headers={
            "Authorization": f"Bearer {act['token']}",
            "Cookie": "c=1",
            "X-Gitlab-Token": "gl",
            "X-Hub-Signature-256": "sha256=00",
            "X-Acme-Check": "zz",
            "Proxy-Authorization": "p",
            "X-GitHub-Event": "push",
            "Content-Type": "text/plain",
        },
        content=b"plain text body",
    )
    [d] = history(server, "scrub")
    payload = d["payload"]
    assert payload["body"] == "plain text body" and payload["content_type"] == "text/plain"
    assert payload["query"] == {"ref": "main"}
    assert payload["headers"]["x-github-event"] == "push"
    for gone in (
        "authorization",
        "cookie",
        "x-gitlab-token",
        "x-hub-signature-256",
        "x-acme-check",
        "proxy-authorization",
    ):
        assert gone not in payload["headers"]
    assert build_payload(b'{"a": [1]}', [], [], "application/json")["body"] == {"a": [1]}
