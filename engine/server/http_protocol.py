"""uvicorn's httptools protocol, with each loop iteration's writes on a connection sent as one.

uvicorn writes a response's status line and headers, then its body, with two transport writes:
two send() calls and two TCP segments, and a client that reads the head and then the body may
wake up twice. Ingestion answers tens of thousands of small responses a second
(bench/webhooks.py), so the server gathers what a connection's writes produce within one event
loop iteration and sends it at the end of that iteration: one send() per response. Nothing is
held longer than the current iteration, and closing a connection sends what is gathered first.
A large write (a streamed body's buffer) is not gathered or copied: what is gathered goes first,
then the buffer itself. Every request's scope offers the `platform.response.splice` extension
(engine.server.splice: a body moved from a socket with splice(2), e.g. a daemon's bulk channel),
and a request with Content-Length of at least the bulk threshold (engine.server.splice.bulk_min_bytes)
and no Transfer-Encoding the `platform.request.splice` one (its body moved to a socket the same way).
Smaller requests (webhook deliveries) get no request splice offer: its closure ties the request's
cycle into a reference cycle, garbage only the collector frees (bench/webhooks.py measured that per
request: ~10 us of CPU and collector pauses of up to 14 ms). The hot path pays ~1 us a request over
uvicorn's own protocol: the cycle is built as a SplicingCycle, and its send hands back uvicorn's.
While a request body is spliced the protocol does not read the connection; the parser, mid-body
then, is replaced by a fresh one once the body is through, which is exactly where the next request
begins (nothing past the body was read).
"""

from __future__ import annotations

import asyncio
import os
import threading
import urllib.parse
from collections.abc import Coroutine
from typing import Any

import httptools
from uvicorn.protocols.http.flow_control import service_unavailable
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from engine.server.splice import REQUEST_SPLICE, SPLICE, bulk_min_bytes, feed, in_thread, pump

LARGE_WRITE = 64 * 1024
# What GatheringHttpProtocol copies from or leans on in uvicorn, as it was when copied: the sha256
# (first 16 hex digits) of each one's source. pyproject pins uvicorn exactly; a new uvicorn whose
# code differs here must be ported by hand (tests/test_server_http_protocol.py compares them).
UVICORN_VERSION = "0.54.0"
UVICORN_SOURCES = {
    "HttpToolsProtocol.on_headers_complete": "1ea8589acfad92d8",  # copied into on_headers_complete
    "HttpToolsProtocol.on_body": "dba9c32aeba35b6a",  # extended: body_seen counts what it passes on
    "RequestResponseCycle.__init__": "4d2f220910c33c12",  # built with its keywords
    "RequestResponseCycle.send": "abdd8601b326a8da",  # SplicingCycle.send hands its coroutine back
}


def uvicorn_drift() -> list[str]:
    """The names in UVICORN_SOURCES whose installed source is not the one copied (empty: none)."""
    import hashlib
    import inspect

    from uvicorn.protocols.http import httptools_impl

    drift = []
    for name, digest in UVICORN_SOURCES.items():
        owner, attr = name.split(".")
        source = inspect.getsource(getattr(getattr(httptools_impl, owner), attr))
        if hashlib.sha256(source.encode()).hexdigest()[:16] != digest:
            drift.append(name)
    return drift


class _GatheringTransport:
    """A transport whose write() gathers until the end of the loop iteration; everything else
    goes to the real transport."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._gathered: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if len(data) >= LARGE_WRITE:
            self.flush()
            if not self._transport.is_closing():
                self._transport.write(data)
            return
        if not self._gathered:
            self._loop.call_soon(self.flush)
        self._gathered.append(bytes(data))

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        if self._gathered:
            data = b"".join(self._gathered) if len(self._gathered) > 1 else self._gathered[0]
            self._gathered = []
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._gathered = []
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(len(d) for d in self._gathered)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class SplicingCycle(RequestResponseCycle):
    """uvicorn's request/response cycle with the `platform.response.splice` extension
    (engine.server.splice): a response body's bytes moved from a socket with splice(2)."""

    def send(self, message: Any) -> Coroutine[Any, Any, None]:  # type: ignore[override]
        """uvicorn's own send's coroutine for every other message, handed back as it is (no
        coroutine of ours around it on the hot path)."""
        if message["type"] != SPLICE:
            return RequestResponseCycle.send(self, message)
        return self.splice(message)

    async def splice(self, message: Any) -> None:
        count = int(message["count"])
        if not self.response_started or self.response_complete or self.chunked_encoding:
            raise RuntimeError("a splice needs a started response with Content-Length")
        if count > self.expected_content_length:
            raise RuntimeError("Response content longer than Content-Length")
        if self.disconnected:
            raise ConnectionError("the client went away")
        gathering: Any = self.transport
        gathering.flush()
        while gathering.get_write_buffer_size():  # what was written before goes first
            if self.disconnected:
                raise ConnectionError("the client went away")
            await asyncio.sleep(0.001)
        dst = os.dup(gathering.get_extra_info("socket").fileno())  # ours: uvloop may close its fd
        try:
            moved = await in_thread(pump, message["fd"], dst, count, message["stop"])
        finally:
            os.close(dst)
        self.expected_content_length -= moved


class GatheringHttpProtocol(HttpToolsProtocol):
    body_seen = 0  # bytes of the current request's body the parser has passed on
    declared = -1  # its Content-Length; -1: none, or chunked (no request splice)
    splice_from = 1 << 20  # the bulk threshold, read once per connection (not an environ read per request)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.splice_from = max(1, bulk_min_bytes())
        super().connection_made(_GatheringTransport(transport, self.loop))  # type: ignore[arg-type]

    def on_headers_complete(self) -> None:
        """uvicorn's own (httptools_impl, UVICORN_VERSION), except that the request's cycle is built as a
        SplicingCycle: turning uvicorn's cycle into one afterwards (a __class__ assignment per
        request) cost ~4 us of CPU a request, a tenth of the HTTP process's work per webhook."""
        parser, scope = self.parser, self.scope
        extensions = scope.setdefault("extensions", {})  # type: ignore[typeddict-unknown-key]
        extensions[SPLICE] = {}
        http_version = parser.get_http_version()
        scope["method"] = parser.get_method().decode("ascii")
        if http_version != "1.1":
            scope["http_version"] = http_version
        if parser.should_upgrade() and self._should_upgrade():
            return
        parsed_url = httptools.parse_url(self.url)
        raw_path = parsed_url.path
        path = raw_path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        scope["path"] = self.root_path + path
        scope["raw_path"] = self.root_path.encode("ascii") + raw_path
        scope["query_string"] = parsed_url.query or b""
        app: Any = self.app
        limit = self.limit_concurrency
        if limit is not None and (len(self.connections) >= limit or len(self.tasks) >= limit):
            app = service_unavailable
            self.logger.warning("Exceeded concurrency limit.")
        self.body_seen, self.declared = 0, -1
        # The last Content-Length, none with a Transfer-Encoding: a scan of the few (lower-case)
        # names instead of a dict of every request's headers (0.85 -> 0.69 us, timed alone).
        length = b""
        for name, value in self.headers:
            if name == b"content-length":
                length = value
            elif name == b"transfer-encoding":
                length = b""
                break
        if length.isdigit():
            self.declared = int(length)
        existing_cycle = self.cycle
        cycle = self.cycle = SplicingCycle(
            scope=scope,
            transport=self.transport,
            flow=self.flow,
            logger=self.logger,
            access_logger=self.access_logger,
            access_log=self.access_log,
            default_headers=self.server_state.default_headers,
            message_event=asyncio.Event(),
            expect_100_continue=self.expect_100_continue,
            keep_alive=http_version != "1.0" and parser.should_keep_alive(),
            on_response=self.on_response_complete,
        )
        # Only a body at the bulk threshold is offered the splice: the closure below and the cycle
        # form a reference cycle, and one per small request kept the garbage collector busy.
        if self.declared >= self.splice_from:
            declared = self.declared

            async def to(fd: int, stop: threading.Event) -> int:
                return await self.splice_body(cycle, declared, fd, stop)
            extensions[REQUEST_SPLICE] = {"to": to}
        if existing_cycle is None or existing_cycle.response_complete:
            self._start_asgi_task(cycle, app)  # the standard case: the request starts now
        else:  # pipelined requests queue up
            self.flow.pause_reading()
            self.pipeline.appendleft((cycle, app))

    def on_body(self, body: bytes) -> None:
        self.body_seen += len(body)
        super().on_body(body)

    async def splice_body(self, cycle: RequestResponseCycle, declared: int, dst: int, stop: threading.Event) -> int:
        """The `platform.request.splice` extension (engine.server.splice): the whole body to `dst`."""
        if cycle.response_complete or len(cycle.body) != (self.body_seen if self.cycle is cycle else declared):
            raise RuntimeError("a request splice needs a body none of which was received yet")
        if cycle.disconnected:
            raise ConnectionError("the client went away")
        if not cycle.more_body:  # the whole body came with the head (or the request is a pipelined one)
            head, cycle.body = bytes(cycle.body), bytearray()
            return await in_thread(feed, head, -1, dst, 0, stop)
        self.flow.pause_reading()
        if cycle.waiting_for_100_continue and not self.transport.is_closing():
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            cycle.waiting_for_100_continue = False
        head, cycle.body = bytes(cycle.body), bytearray()
        src = os.dup(self.transport.get_extra_info("socket").fileno())  # ours: uvloop may close its fd
        try:
            moved = await in_thread(feed, head, src, dst, declared - self.body_seen, stop)
        except BaseException:
            cycle.keep_alive = False  # the parser is mid-body for good: no next request on this connection
            raise
        finally:
            os.close(src)
        if self.parser is not None:  # the body is through: the next request starts at the next byte
            self.parser = httptools.HttpRequestParser(self)
            self.parser.set_dangerous_leniencies(lenient_data_after_close=True)
        self.body_seen = declared
        cycle.more_body = False
        cycle.message_event.set()
        self.flow.resume_reading()
        return moved
