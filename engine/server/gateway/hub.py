"""The daemon streams this server process holds, and the requests in flight on them.

One `Link` per connected daemon (organization + name). The HTTP side opens a `Call` (a request
id and a queue of the daemon's answer frames); the gRPC side puts every frame the daemon sends
into the queue of its request. When a stream ends, every call still in flight on it gets an
`Error(stream_lost)` at once, so nobody waits for an answer that cannot come. A newer daemon
start (another instance id) for the same name replaces the old link at once: the old one's
calls fail (`replaced`) and its PTYs are forgotten.

PTY sessions outlive a stream: the hub keeps a mirror of each PTY's output (capped) and, when
the daemon comes back listing the PTY in its Hello, re-attaches it from the mirror's end.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from engine.daemon import proto
from engine.errors import EngineError

# The frames that end a call, by kind of call.
ENDS = {"shell": ("exit", "error"), "read": ("exit", "error"), "pty": ("exit", "error"),
        "write": ("file_info", "error"), "stat": ("file_info", "error"), "list": ("listing", "error"),
        "tool": ("tool_result", "error")}
MIRROR_BYTES = 1 << 20


class NotConnected(EngineError):
    code = "daemon_not_connected"


class Link:
    """One daemon's stream in this process."""

    def __init__(self, org_id: str, name: str, hello: Any, token_hash: str) -> None:
        self.org_id, self.name = org_id, name
        self.instance_id: str = hello.instance_id
        self.hello = hello
        self.token_hash = token_hash
        self.outbox: asyncio.Queue[Any] = asyncio.Queue()
        self.calls: dict[int, Call] = {}
        self.connected_at = time.time()
        self.last_heartbeat = time.time()
        self.closed = asyncio.Event()
        self.reason = ""

    def send(self, frame: Any) -> None:
        if not self.closed.is_set():
            self.outbox.put_nowait(frame)

    def close(self, code: str, reason: str) -> None:
        if self.closed.is_set():
            return
        self.reason = reason
        self.closed.set()
        for call in list(self.calls.values()):
            call.fail(code, reason)
        self.calls.clear()
        self.outbox.put_nowait(None)

    def summary(self) -> dict[str, Any]:
        kinds: dict[str, int] = {}
        for call in self.calls.values():
            kinds[call.kind] = kinds.get(call.kind, 0) + 1
        return {"name": self.name, "instance_id": self.instance_id, "hostname": self.hello.hostname,
                "roots": list(self.hello.roots), "version": self.hello.version,
                "connected_at": self.connected_at, "last_heartbeat": self.last_heartbeat, "active": kinds}


@dataclass
class Call:
    link: Link
    request: int
    kind: str
    queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    done: bool = False
    bulk: Any = None  # engine.server.gateway.bulk.Sink: a read's bulk side channel, once accepted

    def deliver(self, frame: Any) -> None:
        self.queue.put_nowait(frame)

    def fail(self, code: str, message: str) -> None:
        if self.bulk is not None:
            self.bulk.abort(f"{code}: {message}")
        self.queue.put_nowait(proto.Frame(request=self.request, error=proto.pb().Error(code=code, message=message)))

    def send(self, **body: Any) -> None:
        self.link.send(proto.Frame(request=self.request, **body))

    async def next(self, timeout: float | None = None) -> Any:
        frame = await asyncio.wait_for(self.queue.get(), timeout)
        if frame.WhichOneof("body") in ENDS[self.kind]:
            self.finish()
        return frame

    async def frames(self) -> AsyncIterator[Any]:
        while not self.done:
            yield await self.next()

    def finish(self) -> None:
        self.done = True
        self.link.calls.pop(self.request, None)

    def cancel(self) -> None:
        if not self.done:
            self.send(cancel=proto.pb().Cancel())
            self.finish()


@dataclass
class PtyMirror:
    """What the server has seen of a PTY's output: `data` ends at `end` (a scrollback offset)."""

    org_id: str
    name: str
    pty_id: str
    call: Call | None = None
    data: bytearray = field(default_factory=bytearray)
    end: int = 0
    exit_code: int | None = None
    closed: bool = False
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def append(self, offset: int, data: bytes) -> None:
        if offset > self.end:  # adopted from another server process: start at the daemon's offsets
            self.data = bytearray()
            self.end = offset
        if offset + len(data) <= self.end:
            return  # replayed scrollback we already have
        if offset < self.end:
            data = data[self.end - offset:]
        self.data += data
        self.end += len(data)
        if len(self.data) > MIRROR_BYTES:
            del self.data[: len(self.data) - MIRROR_BYTES]
        self.changed.set()

    def since(self, offset: int) -> tuple[bytes, int]:
        start = self.end - len(self.data)
        offset = max(offset, start)
        return bytes(self.data[offset - start:]), self.end


class Hub:
    def __init__(self) -> None:
        self.links: dict[tuple[str, str], Link] = {}
        self.ids = itertools.count(1)
        self.ptys: dict[str, PtyMirror] = {}

    def attach(self, link: Link) -> None:
        old = self.links.get((link.org_id, link.name))
        if old is not None and old is not link:
            old.close("replaced", f"daemon {link.name} restarted (instance {link.instance_id}); "
                      f"what belonged to instance {old.instance_id} is closed")
            if old.instance_id != link.instance_id:
                for key, mirror in list(self.ptys.items()):
                    if (mirror.org_id, mirror.name) == (link.org_id, link.name) and key not in link.hello.ptys:
                        mirror.closed = True
                        mirror.changed.set()
                        del self.ptys[key]
        self.links[(link.org_id, link.name)] = link

    def detach(self, link: Link, code: str, reason: str) -> None:
        link.close(code, reason)
        if self.links.get((link.org_id, link.name)) is link:
            del self.links[(link.org_id, link.name)]

    def link(self, org_id: str, name: str) -> Link:
        link = self.links.get((org_id, name))
        if link is None or link.closed.is_set():
            raise NotConnected(f"daemon {name!r} is not connected", exit_code=1,
                               hint="start it on its machine: platform daemon start")
        return link

    def call(self, link: Link, kind: str) -> Call:
        """A new request on the link, not sent yet (its first frame may need the request id)."""
        call = Call(link=link, request=next(self.ids), kind=kind)
        link.calls[call.request] = call
        return call

    def open(self, link: Link, kind: str, **body: Any) -> Call:
        call = self.call(link, kind)
        call.send(**body)
        return call

    def dispatch(self, link: Link, frame: Any) -> None:
        """A frame from the daemon: to the call it answers (frames of finished calls are dropped)."""
        call = link.calls.get(frame.request)
        if call is not None:
            call.deliver(frame)

    def local_pty(self, org_id: str, pty_id: str) -> PtyMirror:
        mirror = self.ptys.get(pty_id)
        if mirror is None or mirror.org_id != org_id:
            raise EngineError(f"no terminal {pty_id!r}", code="not_found")
        return mirror
