"""The HTTP side of webhook ingestion, as a raw ASGI front door ahead of Starlette's router.

`POST /hooks/<trigger_id>[/<token>]` is the hot path (bench/webhooks.py): it skips routing and
the Request object. Answers (docs/reference-webhooks.md#endpoints): 202; one identical 404 for unknown trigger, wrong
token and bad signature (byte-for-byte the router's own 404); 409; 413 on the bytes actually
read; 503 when the delivery could not be recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from engine.server.ingest import Verdict
from engine.server.recorder import RecorderClient

MAX_BODY = 1024 * 1024  # a webhook body is 1 MiB at most (413 beyond)
_TRIGGER_ID = re.compile(r"^trg_[0-9a-f]{16}$")
_TOKEN = re.compile(r"^[A-Za-z0-9_\-]{1,200}$")
_PLAIN_ID = re.compile(r"dlv_[0-9a-f]+\Z")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_TEXT = b"text/plain; charset=utf-8"
NOT_FOUND = (404, b"Not Found", [(b"content-type", _TEXT)])  # same bytes as Starlette's PlainTextResponse
_ANSWERS = {
    409: (409, b"Conflict: trigger is disabled", [(b"content-type", _TEXT)]),
    413: (413, b"Payload Too Large: the limit is 1 MiB", [(b"content-type", _TEXT)]),
    503: (
        503,
        b"Service Unavailable: delivery not recorded; retry",
        [(b"content-type", _TEXT), (b"retry-after", b"5")],
    ),
}


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive, declared: str | None) -> tuple[bytes, bool] | None:
    """(body, False), or (b"", True) once more than 1 MiB was declared or actually read; None
    when the client went away."""
    if declared and declared.isdigit() and int(declared) > MAX_BODY:
        return b"", True
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return b"", True
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), False


def accepted_body(verdict: Verdict) -> bytes:
    """The 202's JSON, byte for byte what json.dumps writes; an accepted delivery's from a template (its
    id is `dlv_` and hex digits: nothing to escape), a few microseconds less per delivery."""
    delivery = verdict.delivery_id or ""
    if verdict.outcome != "retry" and _PLAIN_ID.match(delivery):
        return b'{"delivery": "' + delivery.encode() + b'", "status": "accepted"}'
    doc: dict[str, Any] = {"delivery": verdict.delivery_id, "status": "accepted"}
    if verdict.outcome == "retry":
        doc.update(status="retry", duplicate_of=verdict.duplicate_of)
    return json.dumps(doc).encode()


class HookFrontDoor:
    """ASGI middleware: POST /hooks/... is ingested here, everything else goes to `app`."""

    def __init__(self, app: Any, committer: RecorderClient) -> None:
        self.app = app
        self.committer = committer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].startswith("/hooks/"):
            await self.app(scope, receive, send)
            return
        parts = scope["path"][7:].split("/")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        lookup = dict(headers)
        read = await _read_body(receive, lookup.get("content-length"))
        if read is None:
            return
        body, too_large = read
        if (
            len(parts) > 2
            or not _TRIGGER_ID.match(parts[0])
            or (len(parts) == 2 and not _TOKEN.match(parts[1]))
        ):
            await _answer(send, *(_ANSWERS[413] if too_large else NOT_FOUND))
            return
        authorization = lookup.get("authorization", "")
        bearer = authorization[7:].strip() if authorization[:7].lower() == "bearer " else None
        query = scope.get("query_string", b"")
        verdict = await self.committer.submit(
            parts[0],
            parts[1] if len(parts) == 2 else None,
            bearer,
            body,
            headers,
            parse_qsl(query.decode("latin-1"), keep_blank_values=True) if query else [],
            lookup.get("content-type", ""),
            too_large,
        )
        if verdict.status == 202:
            await _answer(send, 202, accepted_body(verdict), [(b"content-type", b"application/json")])
        elif verdict.status == 404:
            await _answer(send, *NOT_FOUND)
        else:
            await _answer(send, *_ANSWERS[verdict.status])
