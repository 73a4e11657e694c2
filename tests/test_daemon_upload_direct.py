"""The daemon's end of an upload on a block device
(docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes): with O_DIRECT (the cores
busy, or PLATFORM_DAEMON_UPLOAD_WRITE=direct) the bytes from the bulk connection go to the file with no
copy into the page cache, the tail that is not whole blocks through the page cache; through the page
cache (the cores free, or `cache`) with write-behind; either way the file is byte-exact; elsewhere
(tmpfs) the splice path stays; a write that fails stops the receiving at once and is raised, never left
half-hidden."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import mmap
import os
import platform
import resource
import signal
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.daemon import bulk
from engine.daemon.bulk import (
    DIRECT_ALIGN,
    DIRECT_BYTES,
    _direct,
    _receive,
    _write_at,
    cpu_busy,
    cpu_pressure,
    write_mode,
)
from tests.waiting import until


@pytest.fixture(autouse=True)
def _direct_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests of the O_DIRECT path choose it (`auto` would follow this machine's CPU pressure)."""
    monkeypatch.setenv("PLATFORM_DAEMON_UPLOAD_WRITE", "direct")


def _on_block_device(path: Path) -> bool:
    return os.major(os.stat(path).st_dev) != 0


@contextlib.contextmanager
def _sending(data: bytes) -> Iterator[tuple[socket.socket, list[BaseException]]]:
    """Our end of a socket pair whose other end sends `data` and half-closes (errors kept)."""
    ours, theirs = socket.socketpair()
    errors: list[BaseException] = []

    def send() -> None:
        try:
            theirs.sendall(data)
            theirs.shutdown(socket.SHUT_WR)
        except OSError as exc:
            errors.append(exc)

    sender = threading.Thread(target=send)
    sender.start()
    try:
        yield ours, errors
    finally:
        sender.join(30)
        theirs.close()
        assert not sender.is_alive(), "the sender was left blocked"


def _received(path: Path, data: bytes, expected: int = 0) -> bool:
    """`data` through `_receive` (announced as `expected` bytes) into a new file at `path`; whether
    O_DIRECT was chosen for it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with _sending(data) as (ours, errors):
            assert _receive(ours, fd, expected) == len(data)
        assert not errors
        direct = bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT)
        os.fsync(fd)
    finally:
        os.close(fd)
    return direct


def test_an_upload_on_a_block_device_goes_direct_and_one_on_tmpfs_is_spliced(tmp_path: Path) -> None:
    """A file on a block device takes the upload with O_DIRECT (whole 8 MiB buffers, then a tail
    that is not whole blocks through the page cache: O_DIRECT is off at the end); a tmpfs file keeps
    the splice path (never O_DIRECT); both byte-exact, an empty upload too."""
    if not _on_block_device(tmp_path):
        pytest.skip(f"{tmp_path} is not on a block device")
    data = os.urandom(2 * DIRECT_BYTES + 3 * DIRECT_ALIGN + 777)
    target = tmp_path / "direct.bin"
    assert _direct_at_open(tmp_path / "probe.bin")
    assert not _received(target, data)  # the tail turned O_DIRECT off
    assert target.read_bytes() == data
    aligned = data[:DIRECT_BYTES + DIRECT_ALIGN]
    assert _received(tmp_path / "aligned.bin", aligned)  # no tail: O_DIRECT stayed on to the end
    assert (tmp_path / "aligned.bin").read_bytes() == aligned
    assert _received(tmp_path / "empty.bin", b"") and (tmp_path / "empty.bin").read_bytes() == b""
    if os.path.isdir("/dev/shm"):
        with tempfile.TemporaryDirectory(dir="/dev/shm") as memory:
            assert not _direct_at_open(Path(memory) / "probe.bin")
            assert not _received(Path(memory) / "spliced.bin", data)
            assert (Path(memory) / "spliced.bin").read_bytes() == data


def test_an_upload_of_announced_size_is_preallocated_and_holds_exactly_what_came(tmp_path: Path) -> None:
    """An upload whose size the server announced is preallocated (several O_DIRECT writes in flight
    into allocated blocks) and byte-exact, its size what came; one that brings fewer bytes than
    announced leaves no preallocated zeros behind (the file is cut to what came)
    (docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes)."""
    if not _on_block_device(tmp_path):
        pytest.skip(f"{tmp_path} is not on a block device")
    data = os.urandom(5 * DIRECT_BYTES)  # more buffers than one upload has: every writer thread used
    assert _received(tmp_path / "whole.bin", data, len(data))  # whole blocks: O_DIRECT to the end
    assert (tmp_path / "whole.bin").read_bytes() == data
    short = data[:DIRECT_BYTES + 3 * DIRECT_ALIGN + 5]
    assert not _received(tmp_path / "short.bin", short, len(data))
    assert os.stat(tmp_path / "short.bin").st_size == len(short)
    assert (tmp_path / "short.bin").read_bytes() == short


def _direct_at_open(path: Path) -> bool:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        return _direct(fd)
    finally:
        os.close(fd)
        path.unlink()


def test_a_write_that_is_not_whole_blocks_turns_o_direct_off_for_the_rest(tmp_path: Path) -> None:
    """`_write_at`: whole blocks at an aligned offset go with O_DIRECT; a piece with a partial block
    writes its whole blocks direct and the rest through the page cache, and from then on every write
    goes through the page cache (a misaligned offset can never go direct); the bytes land in order."""
    if not _on_block_device(tmp_path):
        pytest.skip(f"{tmp_path} is not on a block device")
    pieces = [os.urandom(2 * DIRECT_ALIGN), os.urandom(DIRECT_ALIGN + 5), os.urandom(3 * DIRECT_ALIGN)]
    fd = os.open(tmp_path / "pieces.bin", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    states, offset = [], 0
    try:
        assert _direct(fd)
        direct = True
        for piece in pieces:
            with mmap.mmap(-1, len(piece) + DIRECT_ALIGN) as buf:  # page-aligned, as the daemon's buffers
                buf[:len(piece)] = piece
                with memoryview(buf) as view:
                    direct = _write_at(fd, view[:len(piece)], offset, direct)
            states.append((direct, bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT)))
            offset += len(piece)
    finally:
        os.close(fd)
    assert states == [(True, True), (False, False), (False, False)]
    assert (tmp_path / "pieces.bin").read_bytes() == b"".join(pieces)


@pytest.mark.parametrize("way", ["direct", "cache"])
def test_a_failing_write_stops_the_receive_at_once_and_is_raised(tmp_path: Path, way: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A write the file system refuses mid-upload (here EFBIG: a file size limit of 6 MiB; on a real
    disk ENOSPC the same way) ends the receive with that error -- not after the rest of the upload
    came -- and the sender is cut off, not left blocked (the daemon then answers `stream_lost`,
    nothing written: engine.daemon.files), written with O_DIRECT or through the page cache
    (docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes)."""
    monkeypatch.setenv("PLATFORM_DAEMON_UPLOAD_WRITE", way)
    if not _on_block_device(tmp_path):
        pytest.skip(f"{tmp_path} is not on a block device")
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    fd = os.open(tmp_path / "limited.bin", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (6 << 20, limits[1]))
        with _sending(os.urandom(64 << 20)) as (ours, errors):
            with pytest.raises(OSError) as raised:
                _receive(ours, fd)
        assert raised.value.errno == errno.EFBIG
        assert errors and isinstance(errors[0], OSError)  # the sender was cut off mid-way
        assert os.fstat(fd).st_size <= 6 << 20
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, previous)
        os.close(fd)


def test_the_write_mode_follows_its_setting_else_the_cpu_pressure(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    """How an upload to a block device is written
    (docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes):
    PLATFORM_DAEMON_UPLOAD_WRITE=direct or cache decides; `auto` (the default, and anything else) takes
    O_DIRECT when its buffers can have transparent huge pages (the kernel's THP setting `always` or
    `madvise`) or when tasks waited for a CPU at least 40% of the last 10 s (/proc/pressure/cpu `some
    avg10`), else the page cache; a pressure text without that figure counts as free cores."""
    for given, expected in (("direct", "direct"), ("cache", "cache"), (" Cache ", "cache")):
        monkeypatch.setenv("PLATFORM_DAEMON_UPLOAD_WRITE", given)
        assert write_mode() == expected
    busy = "some avg10=55.31 avg60=40.00 avg300=12.00 total=123\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    free = "some avg10=3.10 avg60=60.00 avg300=70.00 total=123\nfull avg10=90.00 avg60=0.00 avg300=0.00 total=0\n"
    assert cpu_busy(busy) and not cpu_busy(free)
    assert cpu_pressure(busy) == 55.31 and cpu_pressure(free) == 3.10 and cpu_pressure("full avg10=9") is None
    assert cpu_busy("some avg10=40.00 avg60=0 avg300=0 total=1") and not cpu_busy("some avg10=39.99")
    assert not cpu_busy("") and not cpu_busy("some avg10=lots") and not cpu_busy("full avg10=99.0")
    monkeypatch.setenv("PLATFORM_DAEMON_UPLOAD_WRITE", "auto")
    assert write_mode() in ("direct", "cache")
    assert bulk.huge_pages("always [madvise] never") and bulk.huge_pages("[always] madvise never")
    assert not bulk.huge_pages("always madvise [never]") and not bulk.huge_pages("")
    setting = tmp_path / "enabled"
    monkeypatch.setattr(bulk, "THP_SETTING", str(setting))
    setting.write_text("always [madvise] never\n")
    assert write_mode() == "direct", "huge pages: direct whatever the CPU pressure"
    setting.write_text("always madvise [never]\n")
    assert write_mode() == ("direct" if cpu_busy() else "cache")
    setting.unlink()
    assert not bulk.huge_pages(), "no THP setting (no such kernel support): no huge pages"


def test_direct_buffers_are_on_huge_pages_where_the_kernel_gives_them() -> None:
    """docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes: an O_DIRECT buffer asks
    for transparent huge pages (a direct write's requests then carry ~3.9 MiB each instead of ~508 KiB)
    and is faulted in before use; where the kernel's THP setting allows them, the buffer's mapping holds
    huge pages (/proc/self/smaps AnonHugePages), and it works as a buffer either way."""
    buf = bulk._buffer()
    try:
        start = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        buf[:5] = b"hello"
        assert buf[:5] == b"hello" and len(buf) == DIRECT_BYTES
        fields: dict[str, int] = {}
        inside = False
        for line in Path("/proc/self/smaps").read_text().splitlines():
            head = line.split()
            if "-" in head[0] and not head[0].endswith(":"):
                low, high = (int(x, 16) for x in head[0].split("-"))
                inside = low <= start < high
            elif inside and head[0].endswith(":") and len(head) >= 2 and head[1].isdigit():
                fields[head[0][:-1]] = int(head[1])
        assert fields.get("Rss", 0) * 1024 >= DIRECT_BYTES, "faulted in before use"
        if bulk.huge_pages():
            assert fields.get("AnonHugePages", 0) >= 2048, fields
    finally:
        buf.close()


def test_an_upload_through_the_page_cache_is_whole_and_written_behind(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the page cache (PLATFORM_DAEMON_UPLOAD_WRITE=cache) an upload to a block device never
    turns O_DIRECT on, is byte-exact, and is written behind: every range more than WRITEBACK_LAG before
    the end is on the disk already when the receive returns (no dirty page, none under writeback:
    cachestat(2)), so the fsync before the rename waits for the tail only
    (docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes)."""
    if not _on_block_device(tmp_path):
        pytest.skip(f"{tmp_path} is not on a block device")
    monkeypatch.setenv("PLATFORM_DAEMON_UPLOAD_WRITE", "cache")
    monkeypatch.setattr(bulk, "WRITEBACK_BYTES", 1 << 20)
    monkeypatch.setattr(bulk, "WRITEBACK_LAG", 4 << 20)
    data = os.urandom((16 << 20) + 777)
    target = tmp_path / "cached.bin"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with _sending(data) as (ours, errors):
            assert _receive(ours, fd, len(data)) == len(data)
        assert not errors
        assert not fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT
        behind = _cachestat(fd, 0, len(data) - (6 << 20))
        if behind is not None:
            assert behind[0] > 0, "the file's pages are in the page cache"
            assert behind[1:] == (0, 0), f"dirty / under writeback before the lag: {behind}"
        os.fsync(fd)
    finally:
        os.close(fd)
    assert target.read_bytes() == data


def _cachestat(fd: int, offset: int, length: int) -> tuple[int, int, int] | None:
    """(pages cached, dirty, under writeback) of a range of `fd` (cachestat(2), Linux 6.5); None where absent."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
        return None

    class Range(ctypes.Structure):
        _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]

    class Stat(ctypes.Structure):
        _fields_ = [(name, ctypes.c_uint64) for name in ("cache", "dirty", "writeback", "evicted", "recent")]

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    where, stat = Range(offset, length), Stat()
    if libc.syscall(ctypes.c_long(451), ctypes.c_int(fd), ctypes.byref(where), ctypes.byref(stat),
                    ctypes.c_uint(0)) != 0:
        return None  # ENOSYS: a kernel without cachestat
    return stat.cache, stat.dirty, stat.writeback


@contextlib.contextmanager
def _disk_held(monkeypatch: pytest.MonkeyPatch, nbytes: int, lag: int) -> Iterator[tuple[threading.Event, list[int]]]:
    """Page-cache uploads whose write-behind finds the disk slow: every `sync_file_range` call that tells the
    disk to start blocks until the event is set (the calls' flags are kept); writeback every `nbytes`,
    waited for `lag` behind."""
    monkeypatch.setenv("PLATFORM_DAEMON_UPLOAD_WRITE", "cache")
    monkeypatch.setattr(bulk, "WRITEBACK_BYTES", nbytes)
    monkeypatch.setattr(bulk, "WRITEBACK_LAG", lag)
    release, calls = threading.Event(), []

    def held(fd: int, offset: int, count: int, flags: int) -> int:
        calls.append(flags)
        if flags == bulk.SYNC_START:
            release.wait(30)
        return 0

    monkeypatch.setattr(bulk, "_sync_range", lambda: held)
    try:
        yield release, calls
    finally:
        release.set()


def _receiving(path: Path, data: bytes) -> tuple[int, threading.Thread, list[object]]:
    """`data` received into a new file at `path` in a thread; (fd, thread, [its result or error])."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    ours, theirs = socket.socketpair()
    result: list[object] = []

    def receive() -> None:
        try:
            result.append(_receive(ours, fd, len(data)))
        except OSError as exc:
            result.append(exc)

    def send() -> None:
        with contextlib.suppress(OSError), theirs:
            theirs.sendall(data)
            theirs.shutdown(socket.SHUT_WR)

    threading.Thread(target=send, daemon=True).start()
    receiver = threading.Thread(target=receive, daemon=True)
    receiver.start()
    return fd, receiver, result


@contextlib.contextmanager
def _upload_held(monkeypatch: pytest.MonkeyPatch, target: Path, data: bytes, every: int,
                 lag: int) -> Iterator[tuple[int, threading.Event, list, list]]:
    """An upload of `data` into `target` with the disk's writeback calls held (every / lag as _disk_held): yields
    (fd, the release event, the calls made, the receive's result); at the end the disk is released and the
    receive waited for (also when the test failed)."""
    with _disk_held(monkeypatch, every, lag) as (release, calls):
        fd, receiver, result = _receiving(target, data)
        try:
            yield fd, release, calls, result
        finally:
            release.set()
            receiver.join(30)
            os.close(fd)


def test_the_disks_write_behind_never_holds_the_upload_within_the_lag(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the page cache, telling the disk to start on what was written (sync_file_range WRITE) is done
    beside the upload, not in its way: with those calls held, a 6 MiB upload (writeback every 1 MiB, waited
    for 8 MiB behind) is in the file whole while the first one still waits; the disk released, the receive
    returns it byte-exact (docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes)."""
    data = os.urandom((6 << 20) + 5)
    target = tmp_path / "held.bin"
    with _upload_held(monkeypatch, target, data, 1 << 20, 8 << 20) as (fd, release, calls, result):
        until(lambda: os.fstat(fd).st_size == len(data), timeout=15, what="the whole upload in the file")
        assert calls and not release.is_set() and not result, "written while the disk's first start waits"
    assert result == [len(data)]
    assert bulk.SYNC_START in calls
    assert target.read_bytes() == data


def test_an_upload_never_holds_more_than_the_lag_unwritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The write-behind bound (docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes):
    with the disk held (nothing confirmed written), a 16 MiB upload with a 4 MiB lag stops writing at the lag
    (plus at most one 1 MiB move) and waits; the disk released, it goes on and ends byte-exact, every range
    more than the lag before the end waited for."""
    data = os.urandom((16 << 20) + 9)
    target = tmp_path / "bound.bin"
    waiting = threading.Event()

    class Watched(bulk.WriteBehind):
        def __init__(self, fd: int) -> None:
            super().__init__(fd)
            wait = self.cond.wait

            def watched(timeout: float | None = None) -> bool:
                if threading.current_thread() is not self.thread:
                    waiting.set()  # the writer waits for the disk
                return wait(timeout)

            self.cond.wait = watched  # type: ignore[method-assign]

    monkeypatch.setattr(bulk, "WriteBehind", Watched)
    with _upload_held(monkeypatch, target, data, 1 << 20, 4 << 20) as (fd, _release, calls, result):
        until(waiting.is_set, timeout=15, what="the upload to wait for the disk")
        assert os.fstat(fd).st_size <= (4 << 20) + bulk.RECEIVE_BYTES
        assert not result
    assert result == [len(data)]
    assert bulk.SYNC_WAIT in calls
    assert target.read_bytes() == data
