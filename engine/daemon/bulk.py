"""The daemon's end of the bulk side channel (file throughput:
docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes).

A grpc.aio stream in Python tops out far below a socket copy, so a large file read does not send
its bytes as Output frames: the server's FileRead carries a `Bulk` offer (a one-time ticket and
the address of the server process's bulk listener). The daemon dials it -- a plain TCP connection,
outbound like the stream itself (the daemon never listens; the gateway's gRPC port is plain TCP
too, so the side channel is as well) -- presents the request id and the ticket, waits for the
server's one-byte acceptance, tells the server on the stream (`BulkOpened`), and sends the bytes
with os.sendfile from a thread. The stream still carries the end (`Exit`) and errors, and a
`Cancel` on it stops the transfer.

Whatever keeps the side channel from opening (refused, unreachable, the ticket turned down), the
daemon says so in its log and sends the bytes on the stream as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import logging
import os
import socket
import struct
import threading
from collections.abc import Callable
from typing import Any, TypeVar

MAGIC = b"PLATFORM-BULK/1\n"
TICKET_BYTES = 32
PREAMBLE = len(MAGIC) + 8 + TICKET_BYTES
ACCEPTED = b"\x01"
CONNECT_TIMEOUT_S = 5.0
SEND_SLICE = 1 << 30  # one os.sendfile call at most
RECEIVE_BYTES = 1 << 20
WRITEBACK_BYTES = 8 << 20
RELEASE_LATER_BYTES = 1 << 20  # a replaced file from this size is freed after the write's answer (engine.daemon.files)
T = TypeVar("T")

log = logging.getLogger("platform.daemon")


def in_thread(fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """Run `fn` in a thread of its own: a long transfer must not hold the loop's shared pool (the
    daemon's file reads, the server's token checks run there)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: Any, exc: BaseException | None) -> None:
        if done.done():
            return
        if exc is not None:
            done.set_exception(exc)
        else:
            done.set_result(result)

    def run() -> None:
        result, error = None, None
        try:
            result = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, daemon=True, name="bulk").start()
    return done


def preamble(request: int, ticket: bytes) -> bytes:
    return MAGIC + struct.pack(">Q", request) + ticket


def split_host(gateway: str) -> str:
    """The host part of the gateway address the daemon dialed (`host:port`, `[v6]:port`)."""
    host = gateway.rsplit(":", 1)[0] if ":" in gateway else gateway
    return host.strip("[]")


def _open(host: str, port: int, request: int, ticket: bytes) -> socket.socket:
    sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
    try:
        sock.sendall(preamble(request, ticket))
        if sock.recv(1) != ACCEPTED:
            raise ConnectionError("the server refused the ticket")
        sock.settimeout(None)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        return sock
    except BaseException:
        sock.close()
        raise


async def open_channel(offer: Any, gateway: str, request: int) -> socket.socket | None:
    """The accepted side channel, or None (logged) when it cannot be opened."""
    host = offer.host or split_host(gateway)
    try:
        return await asyncio.to_thread(_open, host, offer.port, request, bytes(offer.ticket))
    except (OSError, ConnectionError) as exc:
        log.warning("request %s: bulk side channel to %s:%s not opened (%s); sending the bytes on the stream",
                    request, host, offer.port, exc)
        return None


def _sendfile(sock: socket.socket, fd: int, offset: int, count: int) -> int:
    sent = 0
    try:
        while sent < count:
            n = os.sendfile(sock.fileno(), fd, offset + sent, min(SEND_SLICE, count - sent))
            if n == 0:
                break  # the file shrank: the server sees fewer bytes than announced
            sent += n
        return sent
    finally:
        sock.close()


def _receive(sock: socket.socket, fd: int) -> int:
    """Write everything the server sends until it half-closes; the byte count. The bytes go from
    the socket to the file with splice(2) through a pipe, never through Python (a file system
    that cannot take a splice gets them with recv_into / write)."""
    r, w = os.pipe()
    with contextlib.suppress(OSError):
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, RECEIVE_BYTES)
    got = flushed = 0
    writeback = _writeback()
    try:
        while n := os.splice(sock.fileno(), w, RECEIVE_BYTES, flags=os.SPLICE_F_MOVE):
            while n:
                try:
                    moved = os.splice(r, fd, n, flags=os.SPLICE_F_MOVE)
                except OSError as exc:
                    if exc.errno != errno.EINVAL or got:
                        raise
                    return _copy(sock, fd, os.read(r, n))  # the file system refuses splice
                n -= moved
                got += moved
            if got - flushed >= WRITEBACK_BYTES:  # the disk starts now: the fsync at the end waits less
                writeback(fd, flushed, got - flushed)
                flushed = got
        return got
    finally:
        os.close(r)
        os.close(w)
        sock.close()


def _writeback() -> Callable[[int, int, int], Any]:
    """sync_file_range(SYNC_FILE_RANGE_WRITE): start writing a range out without waiting for it
    (measured: a 256 MiB upload's closing fsync went from ~0.13 s to ~0.01 s). A no-op where absent."""
    import ctypes

    try:
        call = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return lambda fd, offset, count: None
    call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    return lambda fd, offset, count: call(fd, offset, count, 2)


def _copy(sock: socket.socket, fd: int, first: bytes) -> int:
    buf = bytearray(RECEIVE_BYTES)
    view, got, n = memoryview(buf), 0, len(first)
    buf[:n] = first
    while n:
        part = view[:n]
        while part:
            part = part[os.write(fd, part):]
        got += n
        n = sock.recv_into(buf)
    return got


async def send(sock: socket.socket, fd: int, offset: int, count: int, inbox: asyncio.Queue[Any]) -> bool:
    """A read: send `count` bytes of `fd` from `offset`; False when a Cancel came first or the
    server went away."""
    try:
        sent = await _transfer(sock, inbox, [], _sendfile, sock, fd, offset, count)
    except ConnectionError as exc:  # the server closed the channel (its caller went away)
        log.info("bulk transfer stopped: %s", exc)
        return False
    if sent is not None and sent != count:
        log.warning("bulk transfer ended after %d of %d bytes (the file shrank)", sent, count)
    return sent == count


async def receive(sock: socket.socket, fd: int, inbox: asyncio.Queue[Any], kept: list[Any]) -> int | None:
    """A write: the bytes the server sends, into `fd`; None when a Cancel came first, ConnectionError
    when the channel failed. Frames that came meanwhile (the server's `last`) are appended to `kept`."""
    return await _transfer(sock, inbox, kept, _receive, sock, fd)


async def _transfer(sock: socket.socket, inbox: asyncio.Queue[Any], kept: list[Any], fn: Callable[..., int],
                    *args: Any) -> int | None:
    """Run the transfer in its own thread, which owns the socket; a Cancel on the stream (or this
    task's cancellation: the stream was lost) shuts the socket down, which ends the thread."""
    moving = in_thread(fn, *args)
    try:
        while True:
            cancel = asyncio.ensure_future(inbox.get())
            done, _ = await asyncio.wait([moving, cancel], return_when=asyncio.FIRST_COMPLETED)
            if moving in done:
                cancel.cancel()
                try:
                    return moving.result()
                except OSError as exc:
                    raise ConnectionError(f"the bulk channel failed: {exc}") from None
            if cancel.result().WhichOneof("body") == "cancel":
                log.info("bulk transfer cancelled by the server")
                return None
            kept.append(cancel.result())
    finally:
        if not moving.done():
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(BaseException):
                await asyncio.shield(moving)
