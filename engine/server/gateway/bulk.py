"""The server's end of the bulk side channel
(docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes; the daemon's end and the wire
format: engine.daemon.bulk).

Each server process listens for bulk connections on the gateway's host (PLATFORM_DAEMON_BULK_PORT,
default a port the system picks; the address told to daemons: PLATFORM_DAEMON_BULK_ADDRESS
`host:port`, default the port with an empty host, i.e. the host the daemon dialed for the gateway).
A file read of at least PLATFORM_DAEMON_BULK_MIN_BYTES (default 1 MiB) carries a one-time ticket:

- 32 random bytes, bound to that request id and to the daemon stream (instance) that carried it;
- compared in constant time (hmac.compare_digest), single use (taken on its first good use),
  expiring after PLATFORM_DAEMON_BULK_TICKET_MS (10 s), void once its stream is gone, and dropped
  when its request ends;
- a connection with another magic, an unknown request id, a wrong, used or expired ticket, or no
  whole preamble within 5 s is closed without an answer; nothing else is touched.

An upload (a file write) is written to the accepted connection with the transport's flow control
(at most 1 MiB buffered), then half-closed. For a read, an accepted connection is a `Sink`, not
read until the HTTP response decides how: on `platform server` the bytes go from its socket to
the caller's with splice(2) (engine.server.splice: never through Python); otherwise the sink
receives into 256 KiB buffers, at most 32 of them held (then it stops reading: TCP pushes back on
the daemon), and the response takes them whole.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hmac
import logging
import os
import secrets
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.daemon import proto
from engine.daemon.bulk import ACCEPTED, MAGIC, PREAMBLE, TICKET_BYTES
from engine.server.splice import bulk_min_bytes as min_bytes

log = logging.getLogger("platform.gateway")
CHUNK = 256 << 10  # measured (bench/daemon.py): 4 MiB buffers ran slower than 256 KiB ones
DEPTH = 32
PREAMBLE_TIMEOUT_S = 5.0
MAX_UNPROVEN = 256  # connections still owing their preamble; more are closed at once


def ticket_ttl_s() -> float:
    return int(os.environ.get("PLATFORM_DAEMON_BULK_TICKET_MS", "10000")) / 1000


@dataclass
class Ticket:
    link: Any  # engine.server.gateway.hub.Link: the stream that carried the ticket
    request: int
    secret: bytes
    expires: float
    arrived: asyncio.Future[Sink] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class Tickets:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock  # a ticket's expiry is read from it (a test passes a clock it moves)
        self.pending: dict[int, Ticket] = {}
        self.unproven = 0

    def issue(self, link: Any, request: int) -> Ticket:
        ticket = Ticket(link=link, request=request, secret=secrets.token_bytes(TICKET_BYTES),
                        expires=self.clock() + ticket_ttl_s())
        self.pending[request] = ticket
        return ticket

    def take(self, request: int, secret: bytes) -> Ticket | None:
        """The ticket, when `secret` is its secret and it is still good; it is used up."""
        ticket = self.pending.get(request)
        if ticket is None or not hmac.compare_digest(ticket.secret, secret):
            return None
        del self.pending[request]
        if self.clock() > ticket.expires or ticket.link.closed.is_set() or ticket.arrived.done():
            return None
        return ticket

    def drop(self, request: int) -> None:
        ticket = self.pending.pop(request, None)
        if ticket is not None and not ticket.arrived.done():
            ticket.arrived.cancel()


class Sink(asyncio.BufferedProtocol):
    """One bulk connection: the preamble first, then (accepted) the bytes, in whole buffers."""

    def __init__(self, tickets: Tickets) -> None:
        self.tickets = tickets
        self.transport: Any = None
        self.head = bytearray(PREAMBLE)
        self.accepted = False
        self.buf = self.head
        self.pos = 0
        self.ready: collections.deque[memoryview] = collections.deque()
        self.eof = False
        self.error = ""
        self.waiter: asyncio.Future[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.stop = threading.Event()  # a splice of this sink's bytes stops
        self.writable = asyncio.Event()  # an upload's bytes may be written (transport flow control)
        self.writable.set()

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        if self.tickets.unproven >= MAX_UNPROVEN:
            self._refuse(f"{MAX_UNPROVEN} connections already owe their preamble")
            return
        self.tickets.unproven += 1
        self.timer = asyncio.get_running_loop().call_later(PREAMBLE_TIMEOUT_S, self._refuse, "no preamble in time")

    def _proven(self) -> None:
        """No longer a connection owing its preamble (it came, or the connection is gone)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
            self.tickets.unproven -= 1

    def get_buffer(self, sizehint: int) -> memoryview:
        return memoryview(self.buf)[self.pos:]

    def buffer_updated(self, nbytes: int) -> None:
        self.pos += nbytes
        if self.pos < len(self.buf):
            return
        if not self.accepted:
            self._check()
            return
        self.ready.append(memoryview(self.buf))
        self.buf, self.pos = bytearray(CHUNK), 0
        if len(self.ready) >= DEPTH:
            self.transport.pause_reading()
        self._wake()

    def _check(self) -> None:
        self._proven()
        head = bytes(self.head)
        if not head.startswith(MAGIC):
            self._refuse("not a bulk preamble")
            return
        (request,) = struct.unpack(">Q", head[len(MAGIC):len(MAGIC) + 8])
        ticket = self.tickets.take(request, head[len(MAGIC) + 8:])
        if ticket is None:
            self._refuse(f"a bad, used or expired ticket for request {request}")
            return
        self.accepted = True
        self.buf, self.pos = bytearray(CHUNK), 0
        self.transport.pause_reading()  # until the response chose: splice, or read() (nothing came yet)
        self.transport.set_write_buffer_limits(high=1 << 20)
        call = ticket.link.calls.get(request)
        if call is not None:
            call.bulk = self
        ticket.arrived.set_result(self)
        self.transport.write(ACCEPTED)

    def _refuse(self, why: str) -> None:
        if not self.accepted and self.transport is not None and not self.transport.is_closing():
            log.warning("bulk connection from %s refused: %s", self.transport.get_extra_info("peername"), why)
            self.transport.abort()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def eof_received(self) -> bool:
        if self.accepted and self.pos:
            self.ready.append(memoryview(self.buf)[:self.pos])
            self.buf, self.pos = bytearray(0), 0
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._proven()
        if exc is not None and not self.error:
            self.error = f"the bulk connection failed: {exc}"
        self.eof = True
        self.writable.set()
        self._wake()

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()

    async def send(self, data: bytes) -> None:
        """An upload's bytes to the daemon, waiting while the connection's buffer is full."""
        if self.error or self.transport.is_closing():
            raise ConnectionError(self.error or "the bulk connection closed")
        self.transport.write(data)
        await self.writable.wait()

    def finish(self) -> None:
        """The upload is whole: half-close (the daemon reads to the end)."""
        if not self.transport.is_closing():
            self.transport.write_eof()

    def fileno(self) -> int:
        return int(self.transport.get_extra_info("socket").fileno())

    def read(self) -> None:
        """The bytes come through Python (`next`), not by splice."""
        if not self.transport.is_closing():
            self.transport.resume_reading()

    def abort(self, reason: str) -> None:
        """The request failed (its stream dropped): stop, and let the reader know why."""
        self.error = self.error or reason
        self.stop.set()
        self.writable.set()
        self.ready.clear()
        if self.transport is not None and not self.transport.is_closing():
            with contextlib.suppress(OSError):  # wakes a splice waiting for bytes
                # on a dup: uvloop's transport socket refuses shutdown() with a TypeError
                with socket.socket(fileno=os.dup(self.fileno())) as sock:
                    sock.shutdown(socket.SHUT_RDWR)
            self.transport.abort()
        self._wake()

    def close(self) -> None:
        self.stop.set()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()

    async def next(self) -> memoryview | None:
        """The next buffer of bytes; None at the end; ConnectionError when the request failed."""
        while not self.ready:
            if self.error:
                raise ConnectionError(self.error)
            if self.eof:
                return None
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
        data = self.ready.popleft()
        if len(self.ready) < DEPTH // 2 and not self.eof and not self.transport.is_closing():
            self.transport.resume_reading()
        return data


class Listener:
    """The bulk port of one server process, and the tickets it accepts."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.tickets = Tickets()
        self.server: Any = None
        self.port = 0

    async def start(self) -> int:
        port = int(os.environ.get("PLATFORM_DAEMON_BULK_PORT", "0"))
        self.server = await asyncio.get_running_loop().create_server(lambda: Sink(self.tickets), self.host, port)
        self.port = self.server.sockets[0].getsockname()[1]
        return self.port

    def offer(self, link: Any, request: int) -> Any:
        """A ticket for `request` on `link`'s stream, as the FileRead's `Bulk` offer."""
        ticket = self.tickets.issue(link, request)
        host, port = "", self.port
        public = os.environ.get("PLATFORM_DAEMON_BULK_ADDRESS", "")
        if public:
            host, _, given = public.rpartition(":")
            port = int(given)
        return proto.pb().Bulk(ticket=ticket.secret, host=host.strip("[]"), port=port, min_bytes=min_bytes())

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
