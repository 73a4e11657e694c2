"""The delivery journal: on SQLite, the commit point of webhook ingestion
(docs/reference-webhooks.md#durability-and-processes).

The recorder appends each group of accepted deliveries to a journal file in the data dir as ONE
write of framed records, then ONE `fdatasync`, and only then answers the group's 202s. Behind
the answers, an indexer copies the records into SQLite (`deliveries`, `run_queue`,
`delivery_keys`) in large transactions, moving the indexed position (`delivery_journal`) in the
same transaction; segments wholly indexed are deleted.

Layout: `<data dir>/journal/` (0700) holds `lock` (every writer takes it, `flock`, for the whole of a
group: catch up, decide, append, sync) and segments `000000000001.log`, ... (0600), each preallocated
(`posix_fallocate`, SEGMENT_BYTES) so that an append changes no file size. A record is a 4-byte
big-endian payload length, the payload's crc32 (4 bytes), then the payload: a delivery's row, its fields
(DELIVERY_COLUMNS order) as text joined by NUL, SOH for NULL (no field holds either: ids and keys are
generated, the payload is in its deferred form, base64 behind a mark:
engine.hooks.payload.deferred_payload, composed into the stored JSON when indexed; records of earlier
versions hold the ASCII JSON itself, which escapes control characters). A payload of `E` ends the
segment: the next one follows. Zeros where a record would start: nothing written yet. Anything else that
is no valid record (a short or crc-failing one) is a torn write of a writer that died before its
`fdatasync`, so never answered: readers stop there and the next writer ends the segment at it (an `E`
record over it) and goes on in a new one. Every writer also starts a new segment when it opens the
journal, so what a crash left past the last valid record is never read.

Several server processes on one data dir share the journal: under the lock each writer first
reads what the others appended since its last group (their de-duplication keys), then decides
and appends. The indexer and the read barrier (`catch_up`) take SQLite's write lock instead:
two of them in turn copy each record once.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import struct
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engine.hooks.payload import stored_payload

SEGMENT_BYTES = 64 << 20
INLINE_BYTES = 1 << 20  # a segment made on the 202 path when no spare is ready (a start, a fast writer)
SPARE_CHUNK = 256 << 10  # a spare's zeros are written and synced this much at a time (_fill)
SPARE = "spare"
DIR_NAME = "journal"
_HEAD = struct.Struct(">II")  # payload length, crc32 of the payload
END = b"E"
_CHUNK = 1 << 16
SEP, NULL = "\x00", "\x01"
DELIVERY_COLUMNS = (
    "id", "trigger_id", "automation_id", "received_at", "status_code", "outcome", "auth_method", "dedupe_key",
    "duplicate_of", "payload", "body_bytes", "run_id", "detail", "updated_at", "decided_at",
)  # fmt: skip
_PAYLOAD = DELIVERY_COLUMNS.index("payload")
_QUEUE_COLUMNS = ("delivery_id", "automation_id", "state", "enqueued_at", "lease_owner", "lease_until", "attempts")
_END_RECORD = _HEAD.pack(len(END), zlib.crc32(END)) + END
_MIN_BYTES = 1 << 16  # a new segment holds at least this much (a spare or a made one: far more)
INDEX_LIMIT = 5_000  # records per indexing transaction


def journal_dir(database: str | Path) -> Path:
    """The journal beside the SQLite file (the data dir's platform.db)."""
    return Path(database).parent / DIR_NAME


def segment_path(directory: Path, number: int) -> Path:
    return directory / f"{number:012d}.log"


def segments(directory: Path) -> list[int]:
    found = []
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(directory):
            name = entry.name
            if name.endswith(".log") and name[:-4].isdigit():
                found.append(int(name[:-4]))
    return sorted(found)


def encode(rows: list[list[Any]]) -> bytes:
    """Framed records of delivery rows (DELIVERY_COLUMNS order): one bytes for one write."""
    parts = []
    for row in rows:
        payload = SEP.join([NULL if v is None else str(v) for v in row]).encode()
        parts.append(_HEAD.pack(len(payload), zlib.crc32(payload)))
        parts.append(payload)
    return b"".join(parts)


def decode(payload: bytes) -> list[str]:
    """A delivery's row back from its record, as text (NULL as SOH): the INSERT converts them
    (NULLIF, and the integer columns' affinity), so that no Python runs per field."""
    return payload.decode().split(SEP)


def read(fd: int, pos: int, limit: int = 0) -> tuple[list[bytes], int, str]:
    """The valid records' payloads from `pos` on, the position after the last, and why it
    stopped: 'end' (zeros or the file's end: nothing written there yet), 'torn' (bytes that are
    no valid record), 'next' (an end-of-segment record), 'more' (`limit` records read)."""
    out: list[bytes] = []
    buf, base = b"", pos
    while True:
        off = pos - base
        if len(buf) - off < _HEAD.size:
            buf, base, off = os.pread(fd, _CHUNK, pos), pos, 0
            if len(buf) < _HEAD.size:
                return out, pos, "torn" if buf.strip(b"\0") else "end"
        length, crc = _HEAD.unpack_from(buf, off)
        if length == 0:
            return out, pos, "torn" if crc else "end"
        if len(buf) - off - _HEAD.size < length:
            buf, base, off = os.pread(fd, _HEAD.size + length, pos), pos, 0
            if len(buf) < _HEAD.size + length:
                return out, pos, "torn"
        payload = buf[off + _HEAD.size : off + _HEAD.size + length]
        if zlib.crc32(payload) != crc:
            return out, pos, "torn"
        pos += _HEAD.size + length
        if payload == END:
            return out, pos, "next"
        out.append(payload)
        if limit and len(out) >= limit:
            return out, pos, "more"


def _open_segment(directory: Path, number: int, create_bytes: int = 0) -> int | None:
    """A segment's fd; with create_bytes, made if absent (0600, at least that long, durable): the
    spare when there is one (`make_spare`), else a short one written here."""
    path = segment_path(directory, number)
    try:
        return os.open(path, os.O_RDWR)
    except FileNotFoundError:
        if not create_bytes:
            return None
    spare = directory / SPARE
    with contextlib.suppress(FileNotFoundError):
        if spare.stat().st_size >= create_bytes:
            os.rename(spare, path)
            _sync_dir(directory)
            return os.open(path, os.O_RDWR)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    _fill(fd, max(create_bytes, INLINE_BYTES))
    _sync_dir(directory)
    return fd


def _fill(fd: int, size: int, stopping: Callable[[], bool] | None = None) -> bool:
    """Preallocate and write zeros: an `fdatasync` after appending into written blocks flushes the
    data alone; into blocks only allocated (unwritten extents) it also commits the file system's
    journal (measured on ext4: 2-4x its latency, ~1.5x its CPU).

    With `stopping` (a spare, made beside a busy writer): paced, SPARE_CHUNK bytes at a time, each made
    durable before the next, then a pause as long as that took (the disk half idle). Written at once and
    synced once, a spare's 64 MiB went to the disk in one burst (~40 ms here) that every group's
    `fdatasync` queued behind: 15-30 ms stalls of the 202s. Paced: ~0.4 s for 64 MiB, each `fdatasync`
    behind one chunk at most. False when `stopping()` turned true first."""
    os.posix_fallocate(fd, 0, size)
    chunk = (1 << 20) if stopping is None else SPARE_CHUNK
    zeros = bytes(chunk)
    for at in range(0, size, chunk):
        if stopping is not None and stopping():
            return False
        started = time.monotonic()
        os.pwrite(fd, zeros[: size - at], at)
        if stopping is not None:
            os.fdatasync(fd)
            time.sleep(max(time.monotonic() - started, 0.001))
    os.fsync(fd)
    return True


def _sync_dir(directory: Path) -> None:
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)  # a new name survives a power loss
    finally:
        os.close(dfd)


def make_spare(
    directory: Path,
    segment: int,
    pos: int,
    size: int = SEGMENT_BYTES,
    stopping: Callable[[], bool] = lambda: False,
) -> bool:
    """Make the next segment ahead of time (preallocated, zeroed), off the 202 path, once the
    indexed position (segment, pos) is past half of its segment: the indexer's thread calls this;
    a writer rolling over renames it. (A journal that never fills half a segment, as a test
    server's, never writes one.) Its zeros are written paced (`_fill`); `stopping()` true
    between two chunks abandons it. Whether one was made."""
    if (directory / SPARE).exists():
        return False
    try:
        if pos * 2 < os.stat(segment_path(directory, segment)).st_size:
            return False
    except FileNotFoundError:
        return False
    partial = directory / f"{SPARE}.{os.getpid()}"
    fd = os.open(partial, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        made = _fill(fd, size, stopping)
    finally:
        os.close(fd)
    if not made:
        os.unlink(partial)
        return False
    os.rename(partial, directory / SPARE)
    return True


def _drop_partial_spares(directory: Path) -> None:
    """Spares a killed process left half made."""
    for entry in os.scandir(directory):
        if entry.name.startswith(f"{SPARE}.") and entry.name[len(SPARE) + 1 :].isdigit():
            pid = int(entry.name[len(SPARE) + 1 :])
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
            except PermissionError:
                pass


def follow(directory: Path, segment: int, pos: int, limit: int = 0) -> Iterator[tuple[list[bytes], int, int, str]]:
    """Read on from (segment, pos) across end-of-segment records: (payloads, segment, position
    after them, why it stopped) per segment read. A segment that is gone was wholly indexed
    (deleted by an indexer): reading goes on with the next one that exists."""
    while True:
        fd = _open_segment(directory, segment)
        if fd is None:
            later = [n for n in segments(directory) if n > segment]
            if not later:
                yield [], segment, pos, "end"
                return
            segment, pos = later[0], 0
            continue
        try:
            payloads, pos, why = read(fd, pos, limit)
        finally:
            os.close(fd)
        yield payloads, segment, pos, why
        if why != "next":
            return
        segment, pos = segment + 1, 0


class Writer:
    """One recorder's end of the journal: `commit(decide)` runs `decide` under the lock, after
    catching up with what other writers appended (each payload goes to `seen`), and makes the
    bytes it returns durable before it returns."""

    def __init__(
        self,
        directory: Path,
        seen: Callable[[bytes], None],
        busy_seconds: float = 10.0,
    ) -> None:
        self.directory = directory
        self.seen = seen
        self.busy_seconds = busy_seconds  # how long a group waits for the lock before it fails (503)
        directory.mkdir(mode=0o700, exist_ok=True)
        os.chmod(directory, 0o700)
        self._lock = os.open(directory / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        self._fd: int | None = None
        self._size = 0  # the current segment's length (preallocated)
        self.segment = 0
        self.pos = 0

    def _take_lock(self) -> None:
        """The journal's lock, waiting at most busy_seconds (as SQLite's busy timeout) for another
        writer: a group that cannot have it is not recorded (503, the sender retries)."""
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        deadline = time.monotonic() + self.busy_seconds
        while True:
            time.sleep(0.001)
            try:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"the delivery journal is locked (waited {self.busy_seconds:g} s)") from None

    def open(self, segment: int, pos: int) -> None:
        """Start from the indexed position: read the unindexed tail (to `seen`), then end the last
        segment and start a new one (whatever a crash left past its last valid record is never read)."""
        self._take_lock()
        try:
            for payloads, last, end, _why in follow(self.directory, segment, pos):
                for payload in payloads:
                    self.seen(payload)
                self.segment, self.pos = last, end
            self._fd = _open_segment(self.directory, self.segment)
            self._roll()
            _drop_partial_spares(self.directory)
        finally:
            fcntl.flock(self._lock, fcntl.LOCK_UN)

    def commit(self, decide: Callable[[], bytes]) -> None:
        self._take_lock()
        try:
            self._catch_up()
            data = decide()
            if not data:
                return
            if self._fd is None or self.pos + len(data) + len(_END_RECORD) > self._size:
                self._roll(len(data))
            assert self._fd is not None
            written = os.pwrite(self._fd, data, self.pos)
            if written != len(data):
                raise OSError(f"short journal write ({written} of {len(data)} bytes)")
            os.fdatasync(self._fd)
            self.pos += len(data)
        finally:
            fcntl.flock(self._lock, fcntl.LOCK_UN)

    def _catch_up(self) -> None:
        """Read what other writers appended since our last group; end the segment at a torn write."""
        while True:
            if self._fd is None:
                self._fd = _open_segment(self.directory, self.segment, _MIN_BYTES)
                assert self._fd is not None
                self._size = os.fstat(self._fd).st_size
            payloads, self.pos, why = read(self._fd, self.pos)
            for payload in payloads:
                self.seen(payload)
            if why == "end":
                return
            if why == "torn":
                self._roll()  # a writer died mid-write: never answered, never read
                return
            os.close(self._fd)  # 'next': another writer went on in the next segment
            self._fd = None
            later = [n for n in segments(self.directory) if n > self.segment]
            self.segment, self.pos = (later[0] if later else self.segment + 1), 0

    def _roll(self, need: int = 0) -> None:
        """End the current segment here and go on in a new one (large enough for `need` bytes)."""
        if self._fd is not None:
            if os.fstat(self._fd).st_size >= self.pos + len(_END_RECORD):
                os.pwrite(self._fd, _END_RECORD, self.pos)
                os.fdatasync(self._fd)
            os.close(self._fd)
        existing = segments(self.directory)
        self.segment = max([self.segment, *existing]) + 1
        self.pos = 0
        self._fd = _open_segment(
            self.directory, self.segment, max(_MIN_BYTES, need + len(_END_RECORD))
        )
        assert self._fd is not None
        self._size = os.fstat(self._fd).st_size

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        os.close(self._lock)


# --- the index ------------------------------------------------------------------------------------


def position(raw: Any) -> tuple[int, int]:
    row = raw.execute("SELECT segment, position FROM delivery_journal WHERE id = 1").fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def pending(raw: Any, directory: Path) -> bool:
    """Whether records wait to be indexed (a read: no lock taken)."""
    segment, pos = position(raw)
    for payloads, _segment, _pos, why in follow(directory, segment, pos, limit=1):
        if payloads or why == "more":
            return True
    return False


def index(raw: Any, directory: Path, limit: int = INDEX_LIMIT) -> tuple[int, int, bool]:
    """Copy up to `limit` records from the indexed position into SQLite in ONE transaction on the
    sqlite3 connection `raw` (autocommit mode), moving the position with them; then delete the
    segments before it. Returns (records copied, runs queued, whether more are waiting)."""
    raw.execute("BEGIN IMMEDIATE")
    try:
        start, start_pos = position(raw)
        rows: list[list[str]] = []
        more = False
        segment, pos = start, start_pos
        for payloads, segment, pos, why in follow(directory, start, start_pos, limit):  # noqa: B007 - the last one counts
            rows.extend(map(decode, payloads))
            more = why == "more"
        queued = _insert(raw, rows) if rows else 0
        raw.execute(
            "INSERT INTO delivery_journal (id, segment, position) VALUES (1, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET segment = excluded.segment, position = excluded.position",
            (segment, pos),
        )
        raw.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(Exception):
            raw.execute("ROLLBACK")
        raise
    for number in segments(directory):
        if number < segment:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(segment_path(directory, number))
    return len(rows), queued, more


def _insert(raw: Any, rows: list[list[str]]) -> int:
    """The rows (as `decode` gives them), their queued runs and their keys; a row whose id is
    already there (copied before) is left as it is, with no second run. Returns the runs queued."""
    ids = [r[0] for r in rows]
    present: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join(["?"] * len(chunk))
        present.update(r[0] for r in raw.execute(f"SELECT id FROM deliveries WHERE id IN ({marks})", chunk))
    if present:
        rows = [r for r in rows if r[0] not in present]
    for r in rows:  # a payload in its deferred form (the recorder's) is composed here, off the answer's path
        r[_PAYLOAD] = stored_payload(r[_PAYLOAD])
    _insert_rows(raw, _INSERT_DELIVERY, _DELIVERY_VALUES, rows)
    queued = [(r[0], r[2], r[3]) for r in rows if r[5] == "queued"]
    if queued:
        _insert_rows(raw, _INSERT_QUEUED, _QUEUED_VALUES, queued)
    keys = sorted((r[1], r[7], r[0]) for r in rows if r[5] == "queued" and r[7] != NULL)
    if keys:
        _insert_rows(raw, _INSERT_KEYS, "(?, ?, ?)", keys)
    return len(queued)


def _insert_rows(raw: Any, head: str, group: str, rows: list[Any], chunk: int = 500) -> None:
    """Multi-row INSERTs of `chunk` rows: one driver call each (executemany steps once per row and
    drops and takes the GIL back each time, which the recorder's main thread then contends for)."""
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        raw.execute(head.format(values=", ".join([group] * len(part))), list(itertools.chain.from_iterable(part)))


# Every field as text: NULLIF gives back NULL, the integer columns' affinity gives back integers.
_DELIVERY_VALUES = "(" + ", ".join(["NULLIF(?, char(1))"] * len(DELIVERY_COLUMNS)) + ")"
_INSERT_DELIVERY = f"INSERT INTO deliveries ({', '.join(DELIVERY_COLUMNS)}) VALUES {{values}}"
_QUEUED_VALUES = "(?, ?, 'queued', CAST(? AS INTEGER), NULL, NULL, 0)"
_INSERT_QUEUED = f"INSERT INTO run_queue ({', '.join(_QUEUE_COLUMNS)}) VALUES {{values}} ON CONFLICT DO NOTHING"
_INSERT_KEYS = "INSERT INTO delivery_keys (trigger_id, dedupe_key, delivery_id) VALUES {values} ON CONFLICT DO NOTHING"


def catch_up(engine: Any) -> None:
    """The read barrier: index whatever the journal holds beyond the indexed position, so that a
    read sees every delivery answered 202 (history, stats, replay). Costs one read of the position
    and of one record header when nothing waits. SQLite files only; a no-op elsewhere."""
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:":
        return
    directory = journal_dir(database)
    if not directory.is_dir():
        return
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        if not pending(raw, directory):
            return
        more = True
        while more:
            _copied, _queued, more = index(raw, directory)
