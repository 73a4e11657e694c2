"""The recorder's WAL checkpoints, off the commit path (SQLite only; docs/reference-webhooks.md#benchmark).

SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL past 1,000 pages: that
commit copies every page back into the database file and fsyncs it before its batch is answered,
~1 group commit in 65 at the bench's rate, which made the p99 of the answers. The recorder's
connection turns the automatic checkpoint off (`PRAGMA wal_autocheckpoint=0`) and this thread,
on a connection of its own, checkpoints instead, in two steps:

1. Every EVERY commits (~500 WAL frames at the bench's ~15 a batch), or IDLE_WAIT after a commit
   when fewer came: PASSIVE, beside the recorder (a checkpoint never takes the
   write lock; sqlite3 lets go of the GIL while it runs): the copy and the database file's fsync
   while batches go on committing.
2. Once the WAL holds RESTART_AT frames: PASSIVE again, holding the recorder's `gate` (no batch in
   progress), which copies only the frames committed during step 1. With every frame back in the
   database file, the recorder's next write starts the WAL over from its beginning; under a
   steady stream of commits step 1 alone never reaches the WAL's end, and the file would only grow.

A commit never copies the WAL back itself; a batch waits at most for step 2's few pages. Another
server process's recorder on the same file (it does not take this gate) can commit during step 2
and keep the WAL from starting over; once the WAL holds 10 x RESTART_AT frames, step 2 is RESTART
instead, which waits (busy timeout) for that writer and for readers of old snapshots, so the WAL
cannot grow without bound. Other
processes' connections (the HTTP process's API, run workers) keep the automatic checkpoint: they
write little. If a checkpoint fails (a reader holding an old snapshot makes it partial, which is
no failure), the next one tries again; durability does not depend on it: a committed frame in the
WAL is as durable as a page in the database file.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from typing import Any

log = logging.getLogger("platform.server")
EVERY = 32  # commits between checkpoints (the automatic one came every ~65 at ~15 frames a commit)
RESTART_AT = 1_000  # WAL frames at which step 2 lets the WAL start over (SQLite's automatic checkpoint's)
IDLE_WAIT = 1.0  # seconds after which fewer than EVERY commits are checkpointed as well


class Checkpointer:
    """A daemon thread that checkpoints the recorder's database after commits (see the module)."""

    def __init__(self, path: str, gate: threading.Lock, busy_ms: int = 10_000, restart_at: int = RESTART_AT) -> None:
        self.path = path
        self.gate = gate
        self.busy_ms = busy_ms
        self.restart_at = restart_at
        self.checkpoints = 0  # step 1s done (tests, diagnostics)
        self.restarts = 0  # step 2s done
        self._commits = 0  # since the last checkpoint (the recorder's thread adds, this one resets)
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wal-checkpoint", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def committed(self) -> None:
        """A batch committed: there are frames to copy back (a checkpoint after EVERY of them)."""
        self._commits += 1
        if self._commits >= EVERY:
            self._dirty.set()

    def stop(self) -> None:
        """Finish: one last checkpoint of what is committed, then the thread ends."""
        self._stop.set()
        self._dirty.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        db: sqlite3.Connection | None = None
        while True:
            self._dirty.wait(IDLE_WAIT)
            if not self._commits and not self._stop.is_set():
                self._dirty.clear()  # (set by a count that a reset then lost: no spin on it)
                continue  # nothing committed since the last checkpoint
            self._dirty.clear()
            self._commits = 0  # a count lost to a race only moves the next checkpoint
            try:
                if db is None:
                    db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
                    db.execute(f"PRAGMA busy_timeout={self.busy_ms}")
                self._checkpoint(db)
            except Exception as exc:  # noqa: BLE001 - the thread must outlive a failure: the next one tries again
                log.warning("WAL checkpoint: %s", exc)
                if db is not None:
                    db.close()
                db = None
            if self._stop.is_set():
                break
        if db is not None:
            db.close()

    def _checkpoint(self, db: sqlite3.Connection) -> None:
        frames = _wal_checkpoint(db)
        self.checkpoints += 1
        if frames >= self.restart_at or self._stop.is_set():
            with self.gate:
                _wal_checkpoint(db, "RESTART" if frames >= 10 * self.restart_at else "PASSIVE")
            self.restarts += 1


def _wal_checkpoint(db: sqlite3.Connection, mode: str = "PASSIVE") -> int:
    """Copy what the WAL holds back into the database file; the WAL's frames (-1: not in WAL mode)."""
    _busy, frames, _copied = db.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
    return int(frames)


def start_for(engine: Any, gate: threading.Lock) -> Checkpointer | None:
    """A running Checkpointer for a SQLite file engine, else None (PostgreSQL, in-memory)."""
    if engine.dialect.name != "sqlite" or not engine.url.database or engine.url.database == ":memory:":
        return None
    checkpointer = Checkpointer(engine.url.database, gate)
    checkpointer.start()
    return checkpointer

