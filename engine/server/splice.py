"""Socket-to-socket bytes without passing them through Python: the `platform.response.splice` ASGI
extension of `platform server`'s HTTP protocol (engine.server.http_protocol).

A response that has sent its head (with Content-Length) may send
`{"type": "platform.response.splice", "fd": <readable socket>, "count": N, "stop": threading.Event}`:
the server moves N bytes from that socket to the client's connection with splice(2) through a
pipe, in a thread of its own (never the loop's shared pool), once whatever the response wrote
before is on the wire. Memory stays at one pipe (1 MiB); the bytes are never copied into Python.
Measured on the daemon's bulk side channel (bench/daemon.py): the server's CPU per byte is what
limited the relay, and the copies were most of it.

The thread stops, with ConnectionError, when the source ends early, the client goes away (EPIPE),
`stop` is set (the request failed; the caller also shuts the source down to wake the thread), or
nothing moved for PLATFORM_SPLICE_IDLE_S (60 s): a sender that stalls mid-body, or a receiver that
stops reading, does not hold a thread for ever.

The other way, a request body: a request with Content-Length (not chunked) of at least the bulk
threshold (PLATFORM_DAEMON_BULK_MIN_BYTES, default 1 MiB: the size from which an upload takes the
daemon's bulk channel) offers the `platform.request.splice` extension, `{"to": coroutine(fd, stop) -> int}`
(engine.server.http_protocol). Smaller bodies are not offered it: building the offer for every request
(a closure holding the request's cycle, which holds the offer: a reference cycle only the garbage
collector frees) cost webhook ingestion, made of small requests, ~10 us of CPU a request and collector
pauses of up to 14 ms (bench/webhooks.py).
Awaiting it, before any of the body was received, moves the whole body to socket `fd`: the bytes
the HTTP parser already holds first (at most what one read brought plus uvicorn's 64 KiB high water
mark), then the rest with splice(2) from the client's socket, the protocol not reading it meanwhile.
The body that ends early (the client hangs up or half-closes) raises `SourceEnded`; nothing of the
next request is read, and the connection is closed after the response. A whole body leaves the
connection ready for the next request (keep-alive).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import threading
import time

from engine.daemon.bulk import in_thread

SPLICE = "platform.response.splice"
REQUEST_SPLICE = "platform.request.splice"
PIPE_BYTES = 1 << 20
POLL_MS = 100
__all__ = ["REQUEST_SPLICE", "SPLICE", "SourceEnded", "bulk_min_bytes", "feed", "in_thread", "pump"]


def bulk_min_bytes() -> int:
    """The bulk threshold: bodies from this size take the daemon's bulk channel, and requests with
    such a Content-Length are offered the request splice."""
    return int(os.environ.get("PLATFORM_DAEMON_BULK_MIN_BYTES", str(1 << 20)))


class SourceEnded(ConnectionError):
    """The source socket ended (or failed) before `count` bytes came: its sender is at fault."""

    def __init__(self, message: str, moved: int = 0, stalled: float = 0.0) -> None:
        super().__init__(message)
        self.moved = moved
        self.stalled = stalled  # seconds the sender sent nothing, when that ended it


def _wait(poller: select.poll, fd: int, event: int) -> None:
    poller.register(fd, event)
    poller.poll(POLL_MS)
    poller.unregister(fd)


def feed(head: bytes, src: int, dst: int, count: int, stop: threading.Event) -> int:
    """`head`, then `count` bytes from socket `src`, to socket `dst`: a request body to the daemon."""
    view, poller = memoryview(head), select.poll()
    while view:
        if stop.is_set():
            raise ConnectionError("the transfer was stopped")
        try:
            view = view[os.write(dst, view):]
        except BlockingIOError:
            _wait(poller, dst, select.POLLOUT)
    try:
        return len(head) + (pump(src, dst, count, stop) if count else 0)
    except SourceEnded as exc:
        got, declared = len(head) + exc.moved, len(head) + count
        if exc.stalled:
            raise SourceEnded(f"the request body stalled: nothing for {exc.stalled:g} s after {got} of {declared} "
                              "bytes", got, exc.stalled) from None
        raise SourceEnded(f"the request body ended after {got} of {declared} bytes", got) from None


def idle_limit_s() -> float:
    given = os.environ.get("PLATFORM_SPLICE_IDLE_S", "")
    try:
        return max(0.05, float(given)) if given else 60.0
    except ValueError:
        return 60.0


def pump(src: int, dst: int, count: int, stop: threading.Event) -> int:
    """Move `count` bytes from socket `src` to socket `dst` (both may be non-blocking)."""
    idle = idle_limit_s()
    last = time.monotonic()
    r, w = os.pipe()
    with contextlib.suppress(OSError):
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    flags = os.SPLICE_F_MOVE | os.SPLICE_F_NONBLOCK | os.SPLICE_F_MORE
    moved = in_pipe = 0
    eof = False
    poller = select.poll()
    try:
        while moved < count:
            if stop.is_set():
                raise ConnectionError("the transfer was stopped")
            progressed = False
            while in_pipe:  # the pipe to the client, as far as it takes
                try:
                    n = os.splice(r, dst, in_pipe, flags=flags)
                except BlockingIOError:
                    break
                in_pipe -= n
                moved += n
                progressed = True
            if not eof and moved + in_pipe < count:
                try:
                    n = os.splice(src, w, min(PIPE_BYTES, count - moved - in_pipe), flags=flags)
                    eof = n == 0
                    in_pipe += n
                    progressed = progressed or n > 0
                except BlockingIOError:
                    pass
                except OSError as exc:  # reset by the source's sender
                    raise SourceEnded(f"the source failed after {moved} of {count} bytes: {exc}", moved) from None
            if eof and not in_pipe:
                raise SourceEnded(f"the source ended after {moved} of {count} bytes", moved)
            if progressed:
                last = time.monotonic()
            else:
                if time.monotonic() - last > idle:
                    if in_pipe:
                        raise ConnectionError(f"the receiver took nothing for {idle:g} s ({moved} of {count} bytes)")
                    raise SourceEnded(f"the source sent nothing for {idle:g} s after {moved} of {count} bytes",
                                      moved, idle)
                # pipe holding bytes: the client is full; pipe empty: the source has nothing yet
                _wait(poller, *((dst, select.POLLOUT) if in_pipe else (src, select.POLLIN)))
        return moved
    finally:
        os.close(r)
        os.close(w)
