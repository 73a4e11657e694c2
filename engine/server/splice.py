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
or `stop` is set (the request failed; the caller also shuts the source down to wake the thread).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import threading

from engine.daemon.bulk import in_thread

SPLICE = "platform.response.splice"
PIPE_BYTES = 1 << 20
POLL_MS = 100
__all__ = ["SPLICE", "in_thread", "pump"]


def pump(src: int, dst: int, count: int, stop: threading.Event) -> int:
    """Move `count` bytes from socket `src` to socket `dst` (both may be non-blocking)."""
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
            if eof and not in_pipe:
                raise ConnectionError(f"the source ended after {moved} of {count} bytes")
            if not progressed:
                # pipe holding bytes: the client is full; pipe empty: the source has nothing yet
                fd, event = (dst, select.POLLOUT) if in_pipe else (src, select.POLLIN)
                poller.register(fd, event)
                poller.poll(POLL_MS)
                poller.unregister(fd)
        return moved
    finally:
        os.close(r)
        os.close(w)
