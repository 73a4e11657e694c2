"""Files on the daemon, every path inside the allowed roots (symlinks resolved first):

- read: offset and limit; a read of at least the offer's `min_bytes` that carries a `Bulk` offer
  goes over the bulk side channel (engine.daemon.bulk: os.sendfile on a plain TCP connection the
  daemon dials; `BulkOpened` on the stream, then `Exit`), else -- or when the channel cannot be
  opened -- streamed in chunks (default 256 KiB, at most 4 MiB) with credit-based
  flow control: at most `window` chunks (default 16) are in flight until the server's Credit
  frames say it consumed them, so a 1 GiB read holds at most window x chunk bytes in memory on
  either side. The first answer is a FileInfo (size), then Output frames, then Exit(0).
- write: offered the bulk side channel (a `Bulk` on the first FileWrite), the daemon answers
  `BulkOpened` (or `BulkOpened(on_stream)` when it cannot open it) and takes the bytes from the
  connection until the server half-closes; the server's `last` FileWrite says how many it sent.
  Otherwise chunks (0600 while written), fsync, rename: readers
  see the old file or the whole new one; a cancelled or interrupted write leaves no trace. A large
  file the rename replaces keeps a second name (`.NAME.HEX.old`) until the answer is sent, so that
  freeing its blocks is not part of the upload's time. Each
  written chunk is answered with a Credit: the server keeps at most 64 chunks in flight.
- list (at most 10,000 entries) and stat (lstat: a symlink is reported as one).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import stat as st
from pathlib import Path
from typing import Any

from engine.daemon import bulk, proto
from engine.daemon.requests import Active, Context
from engine.errors import EngineError

DEFAULT_CHUNK = 256 * 1024
MAX_CHUNK = 4 * 1024 * 1024
DEFAULT_WINDOW = 16
MAX_ENTRIES = 10_000
log = logging.getLogger("platform.daemon")


def info(path: Path, shown: str | None = None) -> Any:
    s = os.lstat(path)
    kind = ("dir" if st.S_ISDIR(s.st_mode) else "file" if st.S_ISREG(s.st_mode)
            else "symlink" if st.S_ISLNK(s.st_mode) else "other")
    return proto.pb().FileInfo(path=shown or str(path), kind=kind, size=s.st_size, mtime_us=s.st_mtime_ns // 1000,
                               mode=st.S_IMODE(s.st_mode))


def _missing(path: str) -> EngineError:
    return EngineError(f"{path}: no such file or directory", code="not_found")


async def read(active: Active, ask: Any, ctx: Context) -> None:
    path = ctx.roots.resolve(ask.path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise _missing(ask.path) from None
    except IsADirectoryError:
        raise EngineError(f"{ask.path} is a directory", code="usage", exit_code=2) from None
    try:
        size = os.fstat(fd).st_size
        if st.S_ISDIR(os.fstat(fd).st_mode):
            raise EngineError(f"{ask.path} is a directory", code="usage", exit_code=2)
        answer = info(path, str(path))
        answer.size = size  # the size this read works with (the server announces what follows from it)
        await active.send(file_info=answer)
        chunk = min(ask.chunk_bytes or DEFAULT_CHUNK, MAX_CHUNK)
        window = ask.window or DEFAULT_WINDOW
        offset, end = ask.offset, size if not ask.limit else min(size, ask.offset + ask.limit)
        if ask.bulk.ticket and end - offset >= max(ask.bulk.min_bytes, 1):
            sock = await bulk.open_channel(ask.bulk, ctx.gateway, active.request)
            if sock is not None:
                log.info("request %s: %d bytes on the bulk side channel", active.request, end - offset)
                await active.send(bulk_opened=proto.pb().BulkOpened(bytes=end - offset))
                if await bulk.send(sock, fd, offset, end - offset, active.inbox):
                    ctx.transfers.read_bytes += end - offset
                    await active.send(exit=proto.pb().Exit(code=0))
                return
        in_flight = 0
        while offset < end:
            while in_flight >= window or not active.inbox.empty():  # credits, or a cancel, come first
                frame = await active.inbox.get()
                body = frame.WhichOneof("body")
                if body == "cancel":
                    return
                if body == "credit":
                    in_flight -= frame.credit.chunks
            data = await asyncio.to_thread(os.pread, fd, min(chunk, end - offset), offset)
            if not data:
                break
            await active.send(output=proto.pb().Output(stream="file", data=data, offset=offset))
            offset += len(data)
            ctx.transfers.read_bytes += len(data)
            in_flight += 1
        await active.send(exit=proto.pb().Exit(code=0))
    finally:
        os.close(fd)


async def write(active: Active, first: Any, ctx: Context) -> None:
    path = ctx.roots.resolve(first.path)
    if path.is_dir():
        raise EngineError(f"{first.path} is a directory", code="usage", exit_code=2)
    if not path.parent.is_dir():
        raise _missing(str(Path(first.path).parent))
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    done = False
    replaced: Path | None = None
    try:
        sock = await bulk.open_channel(first.bulk, ctx.gateway, active.request) if first.bulk.ticket else None
        if first.bulk.ticket:
            await active.send(bulk_opened=proto.pb().BulkOpened(on_stream=sock is None))
        whole = await (_write_from(sock, fd, active, first.size) if sock is not None
                       else _write_frames(fd, first, active))
        if not whole:
            return
        await asyncio.to_thread(os.fsync, fd)
        ctx.transfers.written_bytes += os.fstat(fd).st_size
        os.fchmod(fd, first.mode or 0o644)
        os.close(fd)
        fd = -1
        replaced = _keep_replaced(path)
        os.replace(tmp, path)
        done = True
        await active.send(file_info=info(path))
    finally:
        if fd >= 0:
            os.close(fd)
        if not done:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        if replaced is not None:  # after the answer: freeing a large file's blocks takes the disk a while
            _release(replaced)


# Files the rename replaced, being unlinked in a thread after the answer (kept so the task is not collected).
_RELEASING: set[asyncio.Future[None]] = set()


def _keep_replaced(path: Path) -> Path | None:
    """A second name for the large file the rename is about to replace, so that the rename does not
    free its blocks (measured: ~80-130 ms for 256 MiB on this machine's disk, inside the upload's answer
    time); `_release` drops that name once the answer is sent. None for a small file or no file."""
    try:
        old = os.lstat(path)
    except OSError:
        return None
    if not st.S_ISREG(old.st_mode) or old.st_nlink != 1 or old.st_size < bulk.RELEASE_LATER_BYTES:
        return None
    kept = path.with_name(f".{path.name}.{secrets.token_hex(6)}.old")
    try:
        os.link(path, kept)
    except OSError:
        return None
    return kept


def _release(kept: Path) -> None:
    task = asyncio.ensure_future(asyncio.to_thread(_unlink_quietly, kept))
    _RELEASING.add(task)
    task.add_done_callback(_RELEASING.discard)


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:  # the write itself succeeded; the spare name is only reported
        log.warning("could not remove %s after a write: %s", path, exc)


async def _write_from(sock: Any, fd: int, active: Active, expected: int) -> bool:
    """The upload on the bulk side channel (`expected`: the size the first frame announced, 0 when
    unknown); True when whole (the server's `last` says how many bytes it sent, and that many came)."""
    kept: list[Any] = []
    try:
        got = await bulk.receive(sock, fd, active.inbox, kept, expected)
    except ConnectionError as exc:
        raise EngineError(f"{exc}: nothing written", code="stream_lost") from None
    if got is None:
        return False
    log.info("request %s: %d bytes received on the bulk side channel", active.request, got)
    while True:
        frame = kept.pop(0) if kept else await active.inbox.get()
        body = frame.WhichOneof("body")
        if body == "cancel":
            return False
        if body == "file_write" and frame.file_write.last:
            break
    if frame.file_write.size != got:
        raise EngineError(f"the upload ended after {got} of {frame.file_write.size} bytes: nothing written",
                          code="stream_lost")
    return True


async def _write_frames(fd: int, first: Any, active: Active) -> bool:
    """The upload in FileWrite chunks on the stream; True at the `last` one, False when cancelled."""
    if first.data:
        await asyncio.to_thread(os.write, fd, first.data)
    last = first.last
    while not last:
        frame = await active.inbox.get()
        body = frame.WhichOneof("body")
        if body == "cancel":
            return False
        if body != "file_write":
            continue
        if frame.file_write.data:
            view = memoryview(frame.file_write.data)
            while view:
                written = await asyncio.to_thread(os.write, fd, view)
                view = view[written:]
            await active.send(credit=proto.pb().Credit(chunks=1))  # the server may send one more
        last = frame.file_write.last
    return True


async def listing(active: Active, ask: Any, ctx: Context) -> None:
    path = ctx.roots.resolve(ask.path)
    if not path.is_dir():
        raise _missing(ask.path) if not path.exists() else EngineError(f"{ask.path} is not a directory",
                                                                       code="usage", exit_code=2)
    entries = []
    with os.scandir(path) as it:
        for entry in sorted(it, key=lambda e: e.name)[:MAX_ENTRIES]:
            with contextlib.suppress(FileNotFoundError):
                entries.append(info(Path(entry.path), entry.name))
    await active.send(listing=proto.pb().Listing(path=str(path), entries=entries))


async def stat(active: Active, ask: Any, ctx: Context) -> None:
    path = ctx.roots.resolve(ask.path)
    if not path.exists():
        raise _missing(ask.path)
    await active.send(file_info=info(path))
