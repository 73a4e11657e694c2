"""`platform server`'s HTTP protocol (engine/server/http_protocol.py): a response leaves as one
write, and gathering writes changes nothing a client sees — keep-alive, pipelined requests,
`Connection: close` (docs/reference-webhooks.md#webhook-ingestion: 202 answers; docs/reference-webhooks.md#benchmark,
throughput)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.http_fixtures import responses as _responses
from tests.webhooks_fixtures import Server, make_trigger, module_server_factory  # noqa: F401


@pytest.fixture(scope="module")
def server(module_server_factory) -> Server:  # noqa: F811
    """One server for the module's tests; each test has its own automation, so its history is its own."""
    return module_server_factory()


def _request(path: str, body: bytes, *headers: str) -> bytes:
    head = [f"POST {path} HTTP/1.1", "Host: test", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def _connect(url: str) -> socket.socket:
    host, port = url.split("://", 1)[1].split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def test_a_response_is_one_write(server, tmp_path: Path) -> None:
    """Status line, headers and body of a 202 arrive together: the first read holds all of it."""
    act = make_trigger(server, tmp_path, "one-write")
    path = "/" + act["url_with_token"].split("/", 3)[3]
    with _connect(server.url) as sock:
        sock.sendall(_request(path, b'{"n": 1}', "Content-Type: application/json"))
        first = sock.recv(65536)
    head, _, body = first.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 202")
    assert json.loads(body)["status"] == "accepted"


def test_pipelined_requests_get_every_response_in_order(server, tmp_path: Path) -> None:
    """Three requests written at once on one connection: three complete answers, in order."""
    act = make_trigger(server, tmp_path, "pipelined")
    path = "/" + act["url_with_token"].split("/", 3)[3]
    with _connect(server.url) as sock:
        sock.sendall(
            _request(path, b"a", "X-Delivery-Id: p-1")
            + _request("/hooks/trg_0000000000000000/nope", b"b")
            + _request(path, b"c", "X-Delivery-Id: p-1")
        )
        answers = _responses(sock, 3)
    assert [h.split(b" ")[1] for h, _ in answers] == [b"202", b"404", b"202"]
    assert answers[1][1] == b"Not Found"
    first, third = json.loads(answers[0][1]), json.loads(answers[2][1])
    assert (first["status"], third["status"], third["duplicate_of"]) == (
        "accepted",
        "retry",
        first["delivery"],
    )


def test_connection_close_sends_the_whole_response_first(server, tmp_path: Path) -> None:
    """With `Connection: close` the server closes after the response, never before its body."""
    act = make_trigger(server, tmp_path, "close")
    path = "/" + act["url_with_token"].split("/", 3)[3]
    with _connect(server.url) as sock:
        sock.sendall(_request(path, b"x", "Connection: close"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 202") and b"connection: close" in head.lower()
    assert json.loads(body)["status"] == "accepted"


def test_the_copied_uvicorn_code_is_the_installed_one() -> None:
    """The server's HTTP protocol is uvicorn's httptools protocol with one change
    (docs/reference-webhooks.md#platform-server): its `on_headers_complete` is a copy of uvicorn's,
    so the installed uvicorn must be the pinned one, and every piece of uvicorn the copy was made
    from must still have the source it was copied from; a uvicorn upgrade fails here, naming what to port."""
    import tomllib

    import uvicorn

    from engine.server.http_protocol import UVICORN_VERSION, uvicorn_drift

    root = Path(__file__).resolve().parent.parent
    deps = tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"uvicorn[standard]=={UVICORN_VERSION}" in deps
    assert uvicorn.__version__ == UVICORN_VERSION
    assert uvicorn_drift() == []


def test_the_accepted_answer_is_the_documented_json_byte_for_byte() -> None:
    """A 202's body (docs/reference-webhooks.md#webhook-ingestion: `{"delivery": "dlv_...", "status":
    "accepted"}`, or `retry` with `duplicate_of`) is what json.dumps writes for that document, also when
    it comes from the front door's template; an id the template cannot carry safely goes through json.dumps."""
    from engine.server.hooks_asgi import accepted_body
    from engine.server.ingest import Verdict

    cases = [
        Verdict(202, "dlv_0001234abcdef0123456789", "queued"),
        Verdict(202, "dlv_00000000000001ffffffffff", "retry", "dlv_00000000000000aaaaaaaaaa"),
        Verdict(202, 'dlv_"quoted\\', "queued"),
    ]
    for verdict in cases:
        doc = {"delivery": verdict.delivery_id, "status": "accepted"}
        if verdict.outcome == "retry":
            doc.update(status="retry", duplicate_of=verdict.duplicate_of)
        assert accepted_body(verdict) == json.dumps(doc).encode()
        assert json.loads(accepted_body(verdict)) == doc
