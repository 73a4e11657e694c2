"""The recorder on SQLite: a group's commit point is the delivery journal (engine/hooks/journal.py;
docs/reference-webhooks.md#durability-and-processes), SQLite is indexed behind the 202s.

`JournalRecorder.record` authenticates a batch as `BatchRecorder` does (reads of committed
trigger rows), decides de-duplication under the journal's lock from the keys it holds in memory
(every key of the journal's unindexed records, its own and other writers'; a key not held is
looked up in `delivery_keys`, where the indexer puts every indexed key), appends the group as ONE
write and ONE `fdatasync`, and answers. `Indexer`, a thread of the recorder, copies the records
into SQLite in large transactions and tells the server when it queued runs (the workers then
find them); the recorder's exit indexes what is left. While the recorder is busy (BUSY_RATE
records a second or more) the indexer waits, up to a bound (BACKLOG_RECORDS records or
BACKLOG_SECONDS): its Python would take the GIL and a core from ingestion at the moment ingestion
needs both; the CPU is spent later, not saved (docs/reference-webhooks.md#durability-and-processes).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Connection, Engine

from engine.hooks import journal
from engine.hooks.secrets import SecretBox
from engine.server.ingest import (
    _DECIDED_AT,
    _DEDUPE_KEY,
    _DETAIL,
    _DUPLICATE_OF,
    _ID,
    _OUTCOME,
    _TRIGGER_ID,
    REFUSED,
    BatchRecorder,
    Submission,
    Verdict,
)
from engine.server.keys import Key, indexed_holders

log = logging.getLogger("platform.server")
HELD_MAX = 200_000  # keys held in memory before those already indexed are let go
# ...and at the first group after a pass of the indexer, from this many on: the unindexed tail read again
# is short then (at HELD_MAX it may be a whole backlog, read under the journal's lock on the 202 path).
HELD_AFTER_PASS = 50_000
INDEX_PAUSE = 0.2  # seconds the indexer lets records gather after the first one (larger transactions)
INDEX_IDLE = 1.0  # seconds between indexer passes when nothing pokes it
# Indexing waits while the recorder is busy (at least BUSY_RATE records a second appended since the
# last look), until BACKLOG_RECORDS of its records wait or BACKLOG_SECONDS passed since the last pass.
# BACKLOG_RECORDS stays under HELD_MAX: the held keys of a backlog never make every group reseed.
BUSY_RATE = 1_000
LOOK_SECONDS = 1.0  # the window the rate is taken over
BACKLOG_RECORDS = 150_000
BACKLOG_SECONDS = 30.0


def journal_enabled(engine: Engine) -> bool:
    """The journal is the commit point for a SQLite file (never on PostgreSQL: several servers with
    their own data dirs share one database, and the transaction is the commit point).
    PLATFORM_DELIVERY_JOURNAL=0 turns it off: each group committed into SQLite before its 202s."""
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    return bool(database and database != ":memory:") and os.environ.get("PLATFORM_DELIVERY_JOURNAL", "1") != "0"


class JournalRecorder(BatchRecorder):
    """Records batches into the delivery journal (see the module)."""

    defer_payload = True  # the indexer composes each stored payload (journal._insert)

    def __init__(self, engine: Engine, box: SecretBox, directory: Path) -> None:
        super().__init__(engine, box)
        self.directory = directory
        self._held: dict[Key, str] = {}
        self._stale = False  # a failed group may have left keys of records never written
        self.indexed_lately = False  # the indexer made a pass since the last reseed (its thread sets it)
        self.held_after_pass = HELD_AFTER_PASS
        self.writer: journal.Writer | None = None

    def warm(self) -> None:
        super().warm()
        try:
            self._open_journal()
        except Exception as exc:  # noqa: BLE001 - the first batch tries again and reports it, as a 503
            log.warning("delivery journal: %s", str(exc).splitlines()[0])
            self.close()

    def _open_journal(self) -> None:
        """Take up the journal from the indexed position (its unindexed keys held in memory)."""
        db = self._driver()
        _drain_key_log(db.raw)
        busy = float(os.environ.get("PLATFORM_DB_BUSY_TIMEOUT_MS", "10000")) / 1000
        writer = journal.Writer(self.directory, self._seen, busy_seconds=busy)
        try:
            writer.open(*journal.position(db.raw))
        except BaseException:
            writer.close()
            raise
        self.writer = writer

    def record(self, batch: list[Submission]) -> list[Verdict]:
        try:
            db = self._driver()
            verdicts, pending = self._authorize(db, batch)

            def decide() -> bytes:
                held, after_pass, self.indexed_lately = len(self._held), self.indexed_lately, False
                # after a pass, only at the first group that follows it: the unindexed tail is short then
                # (later, while indexing waits, it grows: read under the lock it would stall every answer)
                if self._stale or held > HELD_MAX or (after_pass and held > self.held_after_pass):
                    self._reseed(db)
                self._claim(db, pending, verdicts)
                decided = time.time_ns() // 1000  # one clock read per group: the answer latency's end
                for _, row in pending:
                    row[_DECIDED_AT] = decided
                return journal.encode([row for _, row in pending])

            if self.writer is None:
                self._open_journal()
            assert self.writer is not None
            self.writer.commit(decide)
            return [v or REFUSED for v in verdicts]
        except Exception as exc:  # noqa: BLE001 - never leave a request without an answer
            log.warning("delivery batch of %d not recorded: %s", len(batch), str(exc).splitlines()[0])
            self._stale = True
            self.close()
            return [REFUSED] * len(batch)

    def _seen(self, payload: bytes) -> None:
        """A record another writer appended (or the unindexed tail at start): hold its key."""
        row = journal.decode(payload)
        if row[_OUTCOME] == "queued" and row[_DEDUPE_KEY] != journal.NULL:
            self._held.setdefault((row[_TRIGGER_ID], row[_DEDUPE_KEY]), row[_ID])

    def _reseed(self, db: Any) -> None:
        """Under the lock: hold only the keys of records not yet indexed (the others are found in
        delivery_keys), read again from the indexed position."""
        self._held = {}
        self.indexed_lately = False
        segment, pos = journal.position(db.raw)
        for payloads, *_rest in journal.follow(self.directory, segment, pos):
            for payload in payloads:
                self._seen(payload)
        self._stale = False

    def _claim(self, db: Any, pending: list[tuple[int, list[Any]]], verdicts: list[Verdict | None]) -> None:
        """De-duplication (docs/reference-webhooks.md#webhook-ingestion), as BatchRecorder._dedupe
        decides it: the first delivery of a new key holds it; every copy names the holder."""
        candidates = sorted(
            ((row[_TRIGGER_ID], row[_DEDUPE_KEY]), i, row) for i, row in pending if row[_OUTCOME] == "queued"
        )
        if not candidates:
            return
        held = self._held
        misses = list({key for key, _i, _row in candidates if key not in held})
        found = indexed_holders(db, misses) if misses else {}
        for key, i, row in candidates:
            winner = held.get(key) or found.get(key)
            if winner is None:
                winner = held[key] = row[_ID]
            elif key not in held:
                held[key] = winner
            if winner == row[_ID]:
                verdicts[i] = Verdict(202, row[_ID], "queued")
            else:
                row[_OUTCOME], row[_DUPLICATE_OF], row[_DETAIL] = "retry", winner, "retry of an earlier delivery"
                verdicts[i] = Verdict(202, row[_ID], "retry", winner)

    def shut(self) -> None:
        self.close()
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def _drain_key_log(raw: Any) -> None:
    """Keys a recorder without the journal left in delivery_key_log go into delivery_keys (the
    journal's recorder looks keys up there only)."""
    if raw.execute("SELECT 1 FROM delivery_key_log LIMIT 1").fetchone() is None:
        return
    raw.execute("BEGIN IMMEDIATE")
    try:
        raw.execute(
            "INSERT OR IGNORE INTO delivery_keys (trigger_id, dedupe_key, delivery_id)"
            " SELECT trigger_id, dedupe_key, delivery_id FROM delivery_key_log ORDER BY seq"
        )
        raw.execute("DELETE FROM delivery_key_log")
        raw.execute("DELETE FROM delivery_key_merge")
        raw.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(Exception):
            raw.execute("ROLLBACK")
        raise


@dataclass(frozen=True)
class Pacing:
    """When the indexer lets the backlog wait (see the module; tests make them small)."""

    busy_rate: float = BUSY_RATE
    backlog_records: int = BACKLOG_RECORDS
    backlog_seconds: float = BACKLOG_SECONDS
    look_seconds: float = LOOK_SECONDS


class Indexer:
    """A thread copying journal records into SQLite (see the module); `stop` indexes what is left."""

    def __init__(
        self,
        engine: Engine,
        directory: Path,
        gate: threading.Lock,
        indexed: Callable[[int], None],
        manual_checkpoints: bool = False,
        writing: Callable[[], tuple[int, int] | None] = lambda: None,
        pacing: Pacing | None = None,
    ) -> None:
        self.engine = engine
        self.directory = directory
        self.gate = gate
        self.indexed = indexed  # called with the runs queued after each transaction that copied records
        self.manual_checkpoints = manual_checkpoints
        self.writing = writing  # the recorder's journal position (segment, offset), None when closed
        self.pacing = pacing or Pacing()
        self.appended = 0  # records the recorder appended (its thread adds; this one only reads)
        self.passes = 0  # indexing passes done (tests, diagnostics)
        self.deferred = 0  # looks that left the backlog waiting (tests, diagnostics)
        self._looked = (0, time.monotonic())  # `appended` and the clock when the rate was last taken
        self._busy = False
        self._upto = 0  # `appended` when the last pass started
        self._last_pass = time.monotonic()
        self._poked = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="journal-indexer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def poke(self, appended: int = 0) -> None:
        """The recorder appended `appended` records (its thread only)."""
        self.appended += appended
        self._poked.set()

    @property
    def busy(self) -> bool:
        """Whether the last rate taken was the busy rate or more."""
        return self._busy

    def wait_now(self) -> bool:
        """Whether the backlog waits this time (see the module): the recorder appended at least
        pacing.busy_rate records a second over the last look_seconds (or a whole window's worth since
        the last look, however short), and neither bound is reached."""
        pacing = self.pacing
        appended, now = self.appended, time.monotonic()
        before, then = self._looked
        if now - then >= pacing.look_seconds:  # over a second: a loaded machine's short stall is no idle
            self._busy = appended - before >= pacing.busy_rate * (now - then)
            self._looked = (appended, now)
        elif appended - before >= pacing.busy_rate * pacing.look_seconds:
            # A whole window's worth already: busy now, not a window later (a server started under load
            # made its first passes beside the recorder: the 202s' worst stalls, 15-30 ms).
            self._busy = True
            self._looked = (appended, now)
        if not self._busy or appended - self._upto >= pacing.backlog_records:
            return False
        return now - self._last_pass < pacing.backlog_seconds

    def stop(self) -> None:
        self._stop.set()
        self._poked.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        conn: Connection | None = None
        while True:
            self._poked.wait(INDEX_IDLE)
            stopping = self._stop.is_set()
            if not stopping:
                self._stop.wait(INDEX_PAUSE)  # let a few groups gather: fewer, larger transactions
            self._poked.clear()
            if not stopping and self.wait_now():
                self.deferred += 1
                self._spare(None)
                continue
            try:
                upto = self.appended
                if conn is None:
                    conn = self.engine.connect()
                    if self.manual_checkpoints:  # (on the driver: SQLAlchemy would begin a transaction)
                        conn.connection.dbapi_connection.execute("PRAGMA wal_autocheckpoint=0")  # type: ignore[union-attr]
                raw: Any = conn.connection.dbapi_connection
                more = True
                while more:
                    with self.gate:
                        copied, queued, more = journal.index(raw, self.directory)
                    if copied:
                        self.indexed(queued)
                self._upto, self._last_pass = upto, time.monotonic()
                self.passes += 1
                if not stopping:
                    self._spare(raw)
            except Exception as exc:  # noqa: BLE001 - the next pass tries again; records wait in the journal
                log.warning("journal indexing: %s", str(exc).splitlines()[0])
                if conn is not None:
                    with contextlib.suppress(Exception):
                        conn.close()
                conn = None
                if not stopping:
                    self._stop.wait(INDEX_IDLE)
            if stopping:
                break
        if conn is not None:
            conn.close()

    def _spare(self, raw: Any) -> None:
        """The next segment, ready before the writer needs it: judged by the writer's position (the
        indexed one lags while indexing waits), else by the indexed one."""
        where = self.writing()
        if where is None and raw is not None:
            where = journal.position(raw)
        if where is not None:
            try:
                journal.make_spare(self.directory, *where, stopping=self._stop.is_set)
            except OSError as exc:  # a writer rolling over makes a short segment itself
                log.warning("journal spare segment: %s", exc)
