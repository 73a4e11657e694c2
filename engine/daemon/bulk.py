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
import functools
import logging
import mmap
import os
import queue
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
WRITEBACK_BYTES = 8 << 20  # page-cache uploads: the disk is told to start writing every 8 MiB
WRITEBACK_LAG = 64 << 20  # ... and the range this far behind is waited for: at most 64 MiB unwritten per upload
SYNC_START = 2  # sync_file_range: SYNC_FILE_RANGE_WRITE
SYNC_WAIT = 1 | 2 | 4  # WAIT_BEFORE | WRITE | WAIT_AFTER: the range is on the disk when the call returns
# One O_DIRECT write: received whole (MSG_WAITALL), written while the next one comes. 8 MiB: the device
# gets two 4 MiB requests at once (its largest, max_sectors_kb, here); measured, 256 MiB written direct
# and fsync'd: 4 MiB writes ~915 MiB/s, 8 MiB ~1150, 16 MiB ~1130 (medians of 5, a shared disk).
DIRECT_BYTES = 8 << 20
# Per upload (32 MiB): one being received, the others being written by as many threads. Several writes in
# flight only overlap on a file whose blocks are allocated up to its size (ext4 serialises writes that
# extend a file under the inode lock): an upload whose size is known is preallocated first (`_preallocate`).
# Measured, 256 MiB written direct in 8 MiB writes and fsync'd, 11 alternated rounds on a loaded machine:
# one write at a time ~1.0-1.1 GB/s; preallocated, 2 writers ~1.19, 4 writers ~1.26 (medians).
DIRECT_BUFFERS = 4
DIRECT_WRITERS = DIRECT_BUFFERS - 1
DIRECT_ALIGN = 4096  # offsets and lengths of O_DIRECT writes (a device's logical block is 512 or 4096 bytes)
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


def _receive(sock: socket.socket, fd: int, expected: int = 0) -> int:
    """Write everything the server sends until it half-closes; the byte count. `expected`: the size
    the server announced (0: unknown). A file on a block device gets the bytes with O_DIRECT
    (`_receive_direct`) when `write_mode` says so (the machine's cores are busy, or configured);
    otherwise, and elsewhere (tmpfs, network and FUSE file systems, btrfs, a file opened for append, a
    file system that refuses O_DIRECT), they go through the page cache (`_receive_cached`)."""
    if write_mode() == "direct" and _direct(fd):
        return _receive_direct(sock, fd, expected)
    return _receive_cached(sock, fd)


def write_mode() -> str:
    """How an upload to a file on a block device is written: "direct" (O_DIRECT: the least CPU, the
    disk's direct write rate) or "cache" (the page cache with write-behind: one more copy, ~0.04 s of
    CPU per 256 MiB here, but the disk takes buffered writes faster). PLATFORM_DAEMON_UPLOAD_WRITE
    chooses (`direct`, `cache`); `auto` (the default) takes the page cache while the cores are free
    and O_DIRECT while other work waits for them (`cpu_busy`):
    docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes."""
    given = os.environ.get("PLATFORM_DAEMON_UPLOAD_WRITE", "auto").strip().lower()
    if given in ("direct", "cache"):
        return given
    return "direct" if cpu_busy() else "cache"


CPU_BUSY_PERCENT = 40.0  # /proc/pressure/cpu "some avg10" from which the cores count as busy


def cpu_busy(pressure: str | None = None) -> bool:
    """Whether tasks waited for a CPU at least CPU_BUSY_PERCENT of the last 10 s (the kernel's CPU
    pressure, /proc/pressure/cpu `some avg10`; `pressure`: that file's text). Without that file (no
    PSI): whether the 1-minute load average exceeds the number of CPUs."""
    if pressure is None:
        try:
            with open("/proc/pressure/cpu") as fh:
                pressure = fh.read()
        except OSError:
            return os.getloadavg()[0] > (os.cpu_count() or 1)
    value = cpu_pressure(pressure)
    return value is not None and value >= CPU_BUSY_PERCENT


def cpu_pressure(pressure: str) -> float | None:
    """The `some avg10` figure of a /proc/pressure/cpu text (a percentage); None without one."""
    for line in pressure.splitlines():
        fields = dict(part.split("=", 1) for part in line.split()[1:] if "=" in part)
        if line.startswith("some ") and "avg10" in fields:
            try:
                return float(fields["avg10"])
            except ValueError:
                return None
    return None


class WriteBehind:
    """Write-behind for a file written front to back through the page cache: once WRITEBACK_BYTES more
    were written, the disk is told to start on them (sync_file_range WRITE, not waiting: the fsync at
    the end then waits for the tail only; measured, a 256 MiB upload's closing fsync ~0.13 s -> ~0.01 s),
    and what lies more than WRITEBACK_LAG behind is waited for (WAIT_BEFORE | WRITE | WAIT_AFTER): the
    file never holds more than that much unwritten, however large, and a disk slower than the network
    slows the writer instead of filling memory. Also bench/daemon.py's page-cache measure."""

    def __init__(self, fd: int) -> None:
        self.fd, self.started, self.waited = fd, 0, 0
        self.sync = _sync_range()

    def wrote(self, upto: int) -> None:
        """The file now holds `upto` bytes."""
        if upto - self.started < WRITEBACK_BYTES:
            return
        self.sync(self.fd, self.started, upto - self.started, SYNC_START)
        self.started = upto
        if upto - WRITEBACK_LAG > self.waited:
            self.sync(self.fd, self.waited, upto - WRITEBACK_LAG - self.waited, SYNC_WAIT)
            self.waited = upto - WRITEBACK_LAG


def _receive_cached(sock: socket.socket, fd: int) -> int:
    """The upload into `fd` through the page cache: from the socket to the file with splice(2) through
    a pipe (never through Python; a file that cannot take a splice, e.g. opened for append, gets the
    bytes with recv_into / write), with write-behind: the disk starts writing every WRITEBACK_BYTES
    (sync_file_range WRITE) and the range WRITEBACK_LAG behind is waited for, so an upload holds at most
    that much unwritten data and the fsync before the rename waits for the tail only."""
    r, w = os.pipe()
    with contextlib.suppress(OSError):
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, RECEIVE_BYTES)
    got = 0
    behind = WriteBehind(fd)
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
            behind.wrote(got)
        return got
    finally:
        os.close(r)
        os.close(w)
        sock.close()


def _direct(fd: int) -> bool:
    """Turn O_DIRECT on for `fd` when it is worth it and allowed: a file on a block device (a device
    number with a major: not tmpfs, NFS, FUSE, overlayfs or btrfs, whose files live on anonymous
    devices), not opened for append, on a file system that accepts the flag (F_SETFL refuses it, EINVAL,
    where it does not). Why: copying an upload into the page cache cost the daemon about as much CPU
    as the whole raw loopback copy it is measured against (docs/reference-daemon.md#benchmark-benchdaemonpy)."""
    flag = getattr(os, "O_DIRECT", 0)
    if not flag or os.major(os.fstat(fd).st_dev) == 0:
        return False
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    if flags & os.O_APPEND:
        return False
    try:
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | flag)
    except OSError:
        return False
    return True


def _receive_direct(sock: socket.socket, fd: int, expected: int = 0) -> int:
    """The upload into `fd` (O_DIRECT on): the socket read into the buffers of `write_direct`
    (recv_into, MSG_WAITALL); a failed write shuts the socket down, which stops the receiving at once."""

    def stop() -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    try:
        return write_direct(fd, lambda buf: sock.recv_into(buf, DIRECT_BYTES, socket.MSG_WAITALL), stop, expected)
    finally:
        sock.close()


def write_direct(fd: int, fill: Callable[[mmap.mmap], int], stop: Callable[[], None], expected: int = 0) -> int:
    """Everything `fill` puts into a buffer (0: the end) written into `fd` (O_DIRECT on; preallocated
    to `expected` bytes when known, and cut to what came if that differs); the byte count. `fill` fills
    one of a few reused, page-aligned buffers of DIRECT_BYTES at a time, and each full one is written at
    its offset with pwrite by one of DIRECT_WRITERS threads while the next ones are filled: the device
    reads the bytes from the buffers (no copy into the page cache) and has several writes in flight. A
    short fill (the tail, not whole blocks) is written once every write before it is done; it and
    anything after a write the device refused for its alignment go through the page cache (`_write_at`);
    the fsync before the rename covers both. A write that fails calls `stop` (which must make `fill`
    return or raise) and is raised. Also bench/daemon.py's measure of the disk alone."""
    free: queue.SimpleQueue[mmap.mmap] = queue.SimpleQueue()
    full: queue.SimpleQueue[tuple[mmap.mmap, int, int] | None] = queue.SimpleQueue()
    buffers = _take_buffers()
    for buf in buffers:
        free.put(buf)
    failed: list[BaseException] = []
    direct = [True]  # shared by the writers: O_DIRECT still on for `fd`
    if expected:  # never more than half the free space: an announced size alone cannot fill the disk
        with contextlib.suppress(OSError):
            space = os.fstatvfs(fd)
            _preallocate()(fd, min(expected, space.f_bavail * space.f_frsize // 2))

    def write(buf: mmap.mmap, n: int, offset: int) -> None:
        if not failed:
            try:
                with memoryview(buf) as view:
                    direct[0] = _write_at(fd, view[:n], offset, direct[0]) and direct[0]
            except BaseException as exc:  # noqa: BLE001 - raised by the receiving side below
                failed.append(exc)
                stop()  # the filling loop stops at once
        free.put(buf)

    def write_out() -> None:
        while (item := full.get()) is not None:
            write(*item)

    writers = [threading.Thread(target=write_out, daemon=True, name="bulk-write") for _ in range(DIRECT_WRITERS)]
    for writer in writers:
        writer.start()
    got = 0
    try:
        while not failed:
            buf = free.get()
            n = fill(buf)
            if not n:
                free.put(buf)
                break
            if n < DIRECT_BYTES:  # the tail: after every write before it (no hole left below a page-cache write)
                others = [free.get() for _ in range(len(buffers) - 1)]
                for other in others:
                    free.put(other)
                write(buf, n, got)
            else:
                full.put((buf, n, got))
            got += n
    finally:
        for _ in writers:
            full.put(None)
        for writer in writers:
            writer.join()
        _give_back(buffers)
    if failed:
        raise failed[0]
    if expected and got != expected:
        os.ftruncate(fd, got)  # the file holds what came, never preallocated zeros
    return got


# One upload's buffers kept for the next one: a fresh buffer costs ~0.6 ms of page faults per MiB at its
# first use (~0.2 ms mapped with MAP_POPULATE), a reused one nothing; concurrent uploads map their own.
_SPARE: list[mmap.mmap] = []
_SPARE_LOCK = threading.Lock()


def _take_buffers() -> list[mmap.mmap]:
    with _SPARE_LOCK:
        taken = [_SPARE.pop() for _ in range(min(DIRECT_BUFFERS, len(_SPARE)))]
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0)
    return taken + [mmap.mmap(-1, DIRECT_BYTES, flags=flags) for _ in range(DIRECT_BUFFERS - len(taken))]


def _give_back(buffers: list[mmap.mmap]) -> None:
    with _SPARE_LOCK:
        kept = buffers[:max(0, DIRECT_BUFFERS - len(_SPARE))]
        _SPARE.extend(kept)
    for buf in buffers[len(kept):]:
        buf.close()


def _write_at(fd: int, view: memoryview, offset: int, direct: bool) -> bool:
    """`view` written at `offset`: its whole blocks with O_DIRECT while every write so far was
    aligned, the rest through the page cache (O_DIRECT turned off for good: the tail of an upload, a
    short receive, a device that wants another alignment). Whether O_DIRECT is still on."""
    done = 0
    if direct:
        whole = len(view) // DIRECT_ALIGN * DIRECT_ALIGN if offset % DIRECT_ALIGN == 0 else 0
        try:
            while done < whole:
                done += os.pwrite(fd, view[done:whole], offset + done)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
        if done < len(view):
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_DIRECT)
            direct = False
    while done < len(view):
        done += os.pwrite(fd, view[done:], offset + done)
    if not direct and done >= RECEIVE_BYTES:
        _sync_range()(fd, offset, done, SYNC_START)  # through the page cache: the disk starts now (WriteBehind)
    return direct


@functools.cache
def _sync_range() -> Callable[[int, int, int, int], Any]:
    """sync_file_range(fd, offset, count, flags): SYNC_START starts writing a range out without waiting
    for it (measured: a 256 MiB upload's closing fsync went from ~0.13 s to ~0.01 s), SYNC_WAIT returns
    once it is written. A no-op where absent; its errors are the fsync's to report."""
    import ctypes

    try:
        call = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return lambda fd, offset, count, flags: None
    call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    return call


@functools.cache
def _preallocate() -> Callable[[int, int], Any]:
    """fallocate(fd, 0, 0, size): the file's blocks allocated (unwritten) and its size set at once,
    so that O_DIRECT writes into it overwrite allocated blocks and several can be in flight (writes past
    a smaller preallocation extend the file as before, one at a time). Errors
    (a file system without fallocate, no space) are ignored: the writes then allocate as they go and
    report what fails. Not os.posix_fallocate: glibc emulates that by writing every block."""
    import ctypes

    try:
        call = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):
        return lambda fd, size: None
    call.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    return lambda fd, size: call(fd, 0, 0, size)


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


async def receive(sock: socket.socket, fd: int, inbox: asyncio.Queue[Any], kept: list[Any],
                  expected: int = 0) -> int | None:
    """A write: the bytes the server sends, into `fd` (`expected`: the size the server announced, 0 when
    unknown); None when a Cancel came first, ConnectionError when the channel failed. Frames that came
    meanwhile (the server's `last`) are appended to `kept`."""
    return await _transfer(sock, inbox, kept, _receive, sock, fd, expected)


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
