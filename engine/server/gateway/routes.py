"""The HTTP API that issues requests to a daemon (`/api/daemons/...` on `platform server`).

Every route needs a bearer token of a person (a login or an API token, kind access/api) and only
reaches the daemons of that person's organization. `register` needs a browser login (a token
never mints a token). A daemon whose stream another server process holds is reached through that
process (engine.server.gateway.relay); one nobody holds answers 503 `daemon_not_connected`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Send

from engine.auth.routes import principal_of, unauthorized
from engine.auth.tokens import Principal
from engine.daemon import proto
from engine.errors import EngineError
from engine.server.gateway import bulk, streams
from engine.server.gateway.hub import Call, Link, PtyMirror
from engine.server.gateway.service import Gateway
from engine.server.gateway.terminals import pump, state
from engine.server.splice import REQUEST_SPLICE, SPLICE, SourceEnded

DAEMON_TTL_S = 365 * 86_400
WRITE_WINDOW = 64  # upload chunks sent to the daemon and not yet written there (its Credit frames)
MAX_COLLECTED = 16 << 20  # per stream, in a collected (not streamed) shell answer; the rest: `truncated`
STATUS = {"stream_lost": 502, "replaced": 502, "unauthorized": 502, "daemon_not_connected": 503,
          "not_found": 404, "outside_roots": 403, "usage": 400, "forbidden": 403, "detached": 409}
Handler = Callable[[Request, Principal, Gateway], Awaitable[Response]]


def error(code: str, message: str, hint: str | None = None) -> JSONResponse:
    doc: dict[str, Any] = {"code": code, "message": message}
    if hint:
        doc["hint"] = hint
    return JSONResponse({"error": doc, "exit_code": 2 if code == "usage" else 1}, status_code=STATUS.get(code, 400))


def frame_error(frame: Any) -> JSONResponse:
    return error(frame.error.code or "error", frame.error.message)


async def body(request: Request) -> dict[str, Any]:
    try:
        doc = await request.json()
    except ValueError:
        raise EngineError("request body is not JSON", code="usage", exit_code=2) from None
    if not isinstance(doc, dict):
        raise EngineError("request body must be a JSON object", code="usage", exit_code=2)
    return doc


def person(handler: Handler, *, needs_link: bool = True,
           kinds: tuple[str, ...] = ("access", "api")) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        principal = await principal_of(request)
        if principal is None:
            return unauthorized()
        if principal.kind not in kinds or not principal.org_id:
            return error("forbidden", f"a {principal.kind} token cannot drive daemons",
                         "use a login (platform auth login) or an API token")
        gateway: Gateway = request.app.state.gateway
        name = request.path_params.get("name")
        if needs_link and name and (principal.org_id, name) not in gateway.hub.links:
            routed = await route(request, gateway, principal.org_id, name)
            if routed is not None:
                return routed
        try:
            return await handler(request, principal, gateway)
        except EngineError as exc:
            return error(exc.code, exc.message, exc.hint)

    return endpoint


async def route(request: Request, gateway: Gateway, org_id: str, name: str) -> Response | None:
    """The daemon's stream is held by another server process: forward the request there."""
    if request.headers.get("x-platform-routed"):
        return None
    rows = await run_in_threadpool(streams.live, gateway.engine, org_id, gateway.stale_us(), name)
    if not rows or rows[0].node == gateway.node:
        return None
    from engine.server.gateway.relay import relay

    return await relay(request, rows[0].node_url)


def link_of(gateway: Gateway, principal: Principal, request: Request) -> Link:
    assert principal.org_id
    return gateway.hub.link(principal.org_id, request.path_params["name"])


def _str(doc: dict[str, Any], key: str, default: str = "") -> str:
    value = doc.get(key, default)
    if not isinstance(value, str):
        raise EngineError(f"{key} must be a string", code="usage", exit_code=2)
    return value


def _int(doc: dict[str, Any], key: str, default: int = 0) -> int:
    value = doc.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise EngineError(f"{key} must be a non-negative integer", code="usage", exit_code=2)
    return value


def _env(doc: dict[str, Any]) -> dict[str, str]:
    env = doc.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise EngineError("env must be an object of strings", code="usage", exit_code=2)
    return env


async def shell(request: Request, principal: Principal, gateway: Gateway) -> Response:
    doc = await body(request)
    command = _str(doc, "command")
    if not command:
        raise EngineError("command is required", code="usage", exit_code=2)
    start = proto.pb().ShellStart(command=command, cwd=_str(doc, "cwd"), env=_env(doc),
                                  timeout_ms=_int(doc, "timeout_ms"), stdin=_str(doc, "stdin").encode())
    call = gateway.hub.open(link_of(gateway, principal, request), "shell", shell=start)
    if doc.get("stream"):
        return StreamingResponse(_shell_lines(call), media_type="application/x-ndjson")
    out: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
    truncated = False
    try:
        async for frame in call.frames():
            kind = frame.WhichOneof("body")
            if kind == "output":
                call.send(credit=proto.pb().Credit(chunks=1))
                kept = out.setdefault(frame.output.stream, bytearray())
                room = MAX_COLLECTED - len(kept)
                truncated = truncated or len(frame.output.data) > room
                kept.extend(frame.output.data[:max(room, 0)])
            elif kind == "error":
                return frame_error(frame)
            elif kind == "exit":
                return JSONResponse({"stdout": out["stdout"].decode("utf-8", "replace"),
                                     "stderr": out["stderr"].decode("utf-8", "replace"), "exit_code": frame.exit.code,
                                     "timed_out": frame.exit.timed_out, "killed": frame.exit.killed,
                                     "truncated": truncated,
                                     "daemon": call.link.name, "instance_id": call.link.instance_id})
    finally:
        call.cancel()  # the HTTP caller went away (or we are done): never leave the command running
    return error("stream_lost", "the shell ended without an exit")


async def _shell_lines(call: Call) -> AsyncIterator[bytes]:
    try:
        async for frame in call.frames():
            kind = frame.WhichOneof("body")
            if kind == "output":
                call.send(credit=proto.pb().Credit(chunks=1))
                line = {"stream": frame.output.stream, "data": frame.output.data.decode("utf-8", "replace")}
            elif kind == "exit":
                line = {"exit_code": frame.exit.code, "timed_out": frame.exit.timed_out, "killed": frame.exit.killed}
            else:
                line = {"error": {"code": frame.error.code, "message": frame.error.message}}
            yield (json.dumps(line) + "\n").encode()
    finally:
        call.cancel()


async def read(request: Request, principal: Principal, gateway: Gateway) -> Response:
    """The bytes as they come, with Content-Length (the client needs no chunked decoding, and a
    transfer cut short is seen as one). A read of at least the bulk threshold offers the daemon
    the bulk side channel (engine.server.gateway.bulk); the daemon may still answer on the stream."""
    doc = await body(request)
    ask = proto.pb().FileRead(path=_str(doc, "path"), offset=_int(doc, "offset"), limit=_int(doc, "limit"),
                              chunk_bytes=_int(doc, "chunk_bytes"), window=_int(doc, "window"))
    call = gateway.hub.call(link_of(gateway, principal, request), "read")
    tickets = gateway.bulk.tickets
    if gateway.bulk.port and (not ask.limit or ask.limit >= bulk.min_bytes()):
        ask.bulk.CopyFrom(gateway.bulk.offer(call.link, call.request))
    call.send(file_read=ask)
    try:
        first = await call.next()
    except BaseException:
        tickets.drop(call.request)
        call.cancel()
        raise
    if first.WhichOneof("body") == "error":
        tickets.drop(call.request)
        return frame_error(first)
    size = first.file_info.size
    end = size if not ask.limit else min(size, ask.offset + ask.limit)
    length = max(0, end - ask.offset)

    splice = SPLICE in request.scope.get("extensions", {})

    async def chunks() -> AsyncIterator[bytes | memoryview | Spliced]:
        try:
            async for frame in call.frames():
                kind = frame.WhichOneof("body")
                if kind == "output":
                    call.send(credit=proto.pb().Credit(chunks=1))
                    yield frame.output.data
                elif kind == "bulk_opened":
                    async for piece in _side_channel(call, frame.bulk_opened.bytes, splice):
                        yield piece
                elif kind == "error":  # headers are gone: end the body short, the client sees a broken transfer
                    raise ConnectionError(f"read interrupted: {frame.error.code}: {frame.error.message}")
        finally:
            tickets.drop(call.request)
            if call.bulk is not None:
                call.bulk.close()
            call.cancel()

    return PipedResponse(chunks(), media_type="application/octet-stream",  # type: ignore[arg-type]
                         headers={"X-File-Size": str(size), "Content-Length": str(length)})


@dataclass
class Spliced:
    """Body bytes to move from a socket by splice (engine.server.splice), not through Python."""

    fd: int
    count: int
    stop: Any


class PipedResponse(StreamingResponse):
    """A streamed body whose pieces may be `Spliced`; the body iterator is closed at once when the
    response ends (a failed send included), so the request behind it is cancelled then."""

    async def stream_response(self, send: Send) -> None:
        body = self.body_iterator
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            async for piece in body:
                if isinstance(piece, Spliced):
                    await send({"type": SPLICE, "fd": piece.fd, "count": piece.count, "stop": piece.stop})
                else:
                    await send({"type": "http.response.body", "body": piece, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await body.aclose()  # type: ignore[attr-defined]


async def _side_channel(call: Call, expected: int, splice: bool) -> AsyncIterator[memoryview | Spliced]:
    """The bytes the daemon sends on the accepted bulk connection: spliced to the caller when the
    HTTP server offers it, else in whole 256 KiB buffers."""
    sink, got = call.bulk, 0
    if sink is None:
        raise ConnectionError("read interrupted: the daemon announced a bulk channel the server never accepted")
    if splice:
        fd = os.dup(sink.fileno())  # ours: the sink's transport may close its own at any time
        try:
            yield Spliced(fd=fd, count=expected, stop=sink.stop)
        finally:
            os.close(fd)
        return
    sink.read()
    while (data := await sink.next()) is not None:
        got += len(data)
        yield data
    if got != expected:
        raise ConnectionError(f"read interrupted: the bulk channel ended after {got} of {expected} bytes")


async def write(request: Request, principal: Principal, gateway: Gateway) -> Response:
    """The raw body into the file. An upload without Content-Length or of at least the bulk
    threshold offers the daemon the bulk side channel; it may answer that it takes frames."""
    path = request.query_params.get("path", "")
    try:
        mode = int(request.query_params.get("mode", "0") or "0", 8)
    except ValueError:
        raise EngineError("mode must be octal, e.g. 644", code="usage", exit_code=2) from None
    if not 0 <= mode <= 0o7777:
        raise EngineError("mode must be octal, e.g. 644", code="usage", exit_code=2)
    call = gateway.hub.call(link_of(gateway, principal, request), "write")
    first = proto.pb().FileWrite(path=path, mode=mode)
    declared = request.headers.get("content-length")
    if gateway.bulk.port and (declared is None or int(declared or 0) >= bulk.min_bytes()):
        first.bulk.CopyFrom(gateway.bulk.offer(call.link, call.request))
        first.size = int(declared or 0)  # the daemon preallocates the file (engine.daemon.bulk)
    call.send(file_write=first)
    try:
        if first.HasField("bulk"):
            answer = await call.next()  # BulkOpened (on the channel, or on_stream), or a refusal
            if answer.WhichOneof("body") == "bulk_opened" and not answer.bulk_opened.on_stream:
                return await _upload(request, call)
            if answer.WhichOneof("body") == "error":
                return frame_error(answer)
        return await _upload_frames(request, call)
    finally:
        gateway.bulk.tickets.drop(call.request)
        if call.bulk is not None:
            call.bulk.close()
        call.cancel()  # the caller went away, or we are done: a write not committed is discarded


async def _upload(request: Request, call: Call) -> Response:
    """The body on the accepted bulk connection, then `last` with the byte count on the stream."""
    sink, sent = call.bulk, 0
    if sink is None:
        return error("protocol", "the daemon announced a bulk channel the server never accepted")
    spliced = request.scope.get("extensions", {}).get(REQUEST_SPLICE)
    try:
        if spliced is not None:  # the body from the caller's socket to the daemon's, never in Python
            sent = await _splice_up(sink, spliced["to"])
        else:
            async for chunk in request.stream():
                if chunk:
                    await sink.send(chunk)
                    sent += len(chunk)
        sink.finish()
    except SourceEnded as exc:  # the caller hung up or sent less than its Content-Length
        return error("usage", f"{exc}: nothing written")
    except ConnectionError:
        pass  # the stream dropped or the daemon stopped: its answer below says which
    else:
        call.send(file_write=proto.pb().FileWrite(last=True, size=sent))
    answer = await call.next()
    while answer.WhichOneof("body") not in ("file_info", "error"):
        answer = await call.next()
    return frame_error(answer) if answer.WhichOneof("body") == "error" else JSONResponse(_info(answer.file_info))


async def _splice_up(sink: Any, to: Callable[..., Awaitable[int]]) -> int:
    """The request body spliced into the bulk connection, once what the server wrote on it is sent."""
    while sink.transport.get_write_buffer_size():
        if sink.error or sink.transport.is_closing():
            raise ConnectionError(sink.error or "the bulk connection closed")
        await asyncio.sleep(0.001)
    fd = os.dup(sink.fileno())  # ours: the sink's transport may close its own at any time
    try:
        return await to(fd, sink.stop)
    finally:
        os.close(fd)


async def _upload_frames(request: Request, call: Call) -> Response:
    """The body in FileWrite chunks on the stream, at most WRITE_WINDOW of them not yet written."""
    in_flight, answer = 0, None
    async for chunk in request.stream():
        while answer is None and (in_flight >= WRITE_WINDOW or not call.queue.empty()):
            frame = await call.next()  # the daemon's Credit for a written chunk, or an early answer
            if frame.WhichOneof("body") == "credit":
                in_flight -= frame.credit.chunks
            else:
                answer = frame  # a refusal (outside the roots, no parent): stop sending
        if answer is not None:
            break
        if chunk:
            call.send(file_write=proto.pb().FileWrite(data=chunk))
            in_flight += 1
    if answer is None:
        call.send(file_write=proto.pb().FileWrite(last=True))
    while answer is None or answer.WhichOneof("body") == "credit":
        answer = await call.next()
    return frame_error(answer) if answer.WhichOneof("body") == "error" else JSONResponse(_info(answer.file_info))


def _info(info: Any) -> dict[str, Any]:
    return {"path": info.path, "kind": info.kind, "size": info.size, "mtime_us": info.mtime_us,
            "mode": f"{info.mode:04o}"}


async def stat(request: Request, principal: Principal, gateway: Gateway) -> Response:
    doc = await body(request)
    call = gateway.hub.open(link_of(gateway, principal, request), "stat",
                            file_stat=proto.pb().FileStat(path=_str(doc, "path")))
    answer = await call.next()
    return frame_error(answer) if answer.WhichOneof("body") == "error" else JSONResponse(_info(answer.file_info))


async def listing(request: Request, principal: Principal, gateway: Gateway) -> Response:
    doc = await body(request)
    call = gateway.hub.open(link_of(gateway, principal, request), "list",
                            file_list=proto.pb().FileList(path=_str(doc, "path")))
    answer = await call.next()
    if answer.WhichOneof("body") == "error":
        return frame_error(answer)
    return JSONResponse({"path": answer.listing.path, "entries": [_info(e) for e in answer.listing.entries]})


async def tool(request: Request, principal: Principal, gateway: Gateway) -> Response:
    doc = await body(request)
    params = doc.get("params", {})
    call = gateway.hub.open(link_of(gateway, principal, request), "tool", tool_call=proto.pb().ToolCall(
        name=request.path_params["tool"], params_json=json.dumps(params), session=_str(doc, "session", "daemon"),
        root=_str(doc, "root")))
    answer = await call.next()
    if answer.WhichOneof("body") == "error":
        return frame_error(answer)
    result = answer.tool_result
    return JSONResponse({"name": request.path_params["tool"], "output": result.output, "is_error": result.is_error,
                         "data": json.loads(result.data_json or "{}"), "ran_on": f"daemon:{call.link.name}"})


async def pty_open(request: Request, principal: Principal, gateway: Gateway) -> Response:
    doc = await body(request)
    link = link_of(gateway, principal, request)
    call = gateway.hub.open(link, "pty", pty_open=proto.pb().PtyOpen(
        rows=_int(doc, "rows", 24) or 24, cols=_int(doc, "cols", 80) or 80, command=_str(doc, "command"),
        cwd=_str(doc, "cwd"), env=_env(doc)))
    first = await call.next()
    if first.WhichOneof("body") != "pty_opened":
        return frame_error(first) if first.WhichOneof("body") == "error" else error("protocol", "no PtyOpened")
    pty_id = first.pty_opened.pty_id
    mirror = PtyMirror(org_id=link.org_id, name=link.name, pty_id=pty_id, call=call)
    gateway.hub.ptys[pty_id] = mirror
    gateway.track(pump(mirror, call))
    return JSONResponse({"pty_id": pty_id, "pid": first.pty_opened.pid, "daemon": link.name})


def _mirror(request: Request, principal: Principal, gateway: Gateway) -> PtyMirror:
    assert principal.org_id
    return gateway.hub.local_pty(principal.org_id, request.path_params["pty"])


def _attached(mirror: PtyMirror) -> Call:
    if mirror.closed:
        raise EngineError(f"terminal {mirror.pty_id} is closed", code="not_found")
    if mirror.call is None or mirror.call.link.closed.is_set():
        raise EngineError(f"terminal {mirror.pty_id} is detached (the daemon's stream dropped); "
                          "it is attached again when the daemon reconnects", code="detached")
    return mirror.call


async def pty_input(request: Request, principal: Principal, gateway: Gateway) -> Response:
    doc = await body(request)
    mirror = _mirror(request, principal, gateway)
    data = base64.b64decode(_str(doc, "data_b64")) if doc.get("data_b64") else _str(doc, "data").encode()
    _attached(mirror).send(input=proto.pb().Input(data=data))
    return JSONResponse({"pty_id": mirror.pty_id, "sent": len(data)})


async def pty_resize(request: Request, principal: Principal, gateway: Gateway) -> Response:
    doc = await body(request)
    mirror = _mirror(request, principal, gateway)
    _attached(mirror).send(pty_resize=proto.pb().PtyResize(rows=_int(doc, "rows", 24), cols=_int(doc, "cols", 80)))
    return JSONResponse({"pty_id": mirror.pty_id, "rows": doc.get("rows"), "cols": doc.get("cols")})


async def pty_output(request: Request, principal: Principal, gateway: Gateway) -> Response:
    mirror = _mirror(request, principal, gateway)
    try:
        offset = int(request.query_params.get("offset", "0"))
        wait_ms = min(int(request.query_params.get("wait_ms", "0")), 30_000)
    except ValueError:
        raise EngineError("offset and wait_ms must be integers", code="usage", exit_code=2) from None
    if mirror.end <= offset and not mirror.closed and wait_ms:
        mirror.changed.clear()
        try:
            await asyncio.wait_for(mirror.changed.wait(), wait_ms / 1000)
        except TimeoutError:
            pass
    return JSONResponse(state(mirror, offset))


async def pty_close(request: Request, principal: Principal, gateway: Gateway) -> Response:
    mirror = _mirror(request, principal, gateway)
    if mirror.call is not None and not mirror.closed:
        mirror.call.send(cancel=proto.pb().Cancel())
        for _ in range(100):
            if mirror.closed:
                break
            await asyncio.sleep(0.02)
    gateway.hub.ptys.pop(mirror.pty_id, None)
    return JSONResponse(state(mirror, mirror.end))


async def listed(request: Request, principal: Principal, gateway: Gateway) -> Response:
    assert principal.org_id
    rows = await run_in_threadpool(streams.live, gateway.engine, principal.org_id, gateway.stale_us())
    daemons = []
    for row in rows:
        local = gateway.hub.links.get((row.org_id, row.name))
        if row.node == gateway.node and local is None:
            continue  # this process just lost that stream; its row is being removed
        daemons.append({"name": row.name, "instance_id": row.instance_id, "hostname": row.hostname, "roots": row.roots,
                        "version": row.version, "server": f"{row.node}@{row.node_url}",
                        "connected_at": row.connected_at / 1e6, "last_heartbeat": row.heartbeat_at / 1e6,
                        "active": local.summary()["active"] if local else None})
    return JSONResponse({"daemons": daemons})


async def register(request: Request, principal: Principal, gateway: Gateway) -> Response:
    from engine.auth.api import _human, _name, _replace

    doc = await body(request)
    _human(principal, "registering a daemon")
    assert principal.org_id and principal.user_id
    name = _name(doc)
    minted = await run_in_threadpool(
        lambda: _replace(request, kind="daemon", org_id=principal.org_id or "", name=f"daemon@{name}",
                         user_id=principal.user_id, scope="platform:daemon", ttl_s=DAEMON_TTL_S,
                         parent_id=principal.token_id))
    import os

    where = os.environ.get("PLATFORM_PUBLIC_GATEWAY") or f"{request.url.hostname}:{gateway.port}"
    return JSONResponse({**minted.model_dump(mode="json"), "daemon": name, "gateway": where})


async def revoke(request: Request, principal: Principal, gateway: Gateway) -> Response:
    from engine.auth.tokens import revoke as revoke_tokens

    assert principal.org_id
    name = request.path_params["name"]
    ids = await run_in_threadpool(revoke_tokens, gateway.engine, gateway.verifier, org_id=principal.org_id,
                                  kind="daemon", name_or_id=f"daemon@{name}")
    request.app.state.verifier.forget()
    link = gateway.hub.links.get((principal.org_id, name))
    if link is not None:
        link.send(proto.Frame(error=proto.pb().Error(code="unauthorized", message="the daemon token was revoked")))
        await asyncio.sleep(0)
        gateway.hub.detach(link, "unauthorized", f"the token of daemon {name!r} was revoked")
    return JSONResponse({"revoked": ids, "daemon": name})


def daemon_routes() -> list[Route]:
    base = "/api/daemons/{name}"
    return [
        Route("/api/daemons", person(listed, needs_link=False), methods=["GET"]),
        Route("/api/daemons/register", person(register, needs_link=False), methods=["POST"]),
        Route(base + "/revoke", person(revoke, needs_link=False), methods=["POST"]),
        Route(base + "/shell", person(shell), methods=["POST"]),
        Route(base + "/files/read", person(read), methods=["POST"]),
        Route(base + "/files/write", person(write), methods=["POST"]),
        Route(base + "/files/stat", person(stat), methods=["POST"]),
        Route(base + "/files/list", person(listing), methods=["POST"]),
        # `run`: the short-lived credential of a server-side run (engine.server.gateway.runs), tools only
        Route(base + "/tools/{tool}", person(tool, kinds=("access", "api", "run")), methods=["POST"]),
        Route(base + "/pty", person(pty_open), methods=["POST"]),
        Route(base + "/pty/{pty}/input", person(pty_input), methods=["POST"]),
        Route(base + "/pty/{pty}/resize", person(pty_resize), methods=["POST"]),
        Route(base + "/pty/{pty}/output", person(pty_output), methods=["GET"]),
        Route(base + "/pty/{pty}/close", person(pty_close), methods=["POST"]),
    ]
