"""The recorder's WAL checkpoints off the commit path (engine/server/checkpoint.py;
docs/reference-webhooks.md#durability-and-processes): its commits never copy the WAL back, a thread
does, and the WAL still starts over. A real SQLite store made in this process with the engine's own
migrations and trigger calls; real recorders and a real checkpoint thread on it."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.server import checkpoint
from engine.server.ingest import _DELIVERY_COLUMNS, BatchRecorder, Submission
from engine.serverstore import store
from tests.waiting import until
from tests.webhooks_fixtures import ActivatedStore, activated_store

PAGE = 4096
WAL_HEADER, FRAME_HEADER = 32, 24


class Hooks(ActivatedStore):
    """A store with one activated trigger, and the submissions the HTTP process would send for it."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir, "wal")
        self.sent = 0

    def batch(self, size: int = 25) -> list[Submission]:
        out = []
        for _ in range(size):
            self.sent += 1
            out.append(
                Submission(self.trigger_id, self.token, None, b'{"n": %d}' % self.sent,
                           [("x-delivery-id", f"wal-{self.sent}")], [], "application/json", False, store.now_us())
            )  # fmt: skip
        return out

    def wal_frames(self) -> int:
        """Frames the WAL file holds (its size: the file keeps its length when the WAL starts over)."""
        size = (self.data_dir / "platform.db-wal").stat().st_size
        return max(0, (size - WAL_HEADER) // (PAGE + FRAME_HEADER))

    def frames_in_use(self) -> int:
        """Frames of the WAL in use now (a PASSIVE checkpoint reports them; it only copies)."""
        with sqlite3.connect(self.path) as db:
            return int(db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1])


@pytest.fixture
def hooks(tmp_path: Path) -> Iterator[Hooks]:
    yield from activated_store(tmp_path, Hooks)


def test_commits_leave_the_wal_to_the_checkpoint_thread(hooks: Hooks, tmp_path: Path) -> None:
    """With the checkpointer's thread in charge (docs/reference-webhooks.md#durability-and-processes),
    no group commit copies the WAL back (it grows past SQLite's automatic 1,000 frames); the
    thread copies every committed delivery into the database file and, between two batches, lets
    the WAL start over; every 202 stays recorded."""
    rec = BatchRecorder(hooks.engine, hooks.box)
    rec.manual_checkpoints = True
    accepted = 0
    for _ in range(300):  # ~15 frames a batch of 25
        accepted += sum(v.status == 202 for v in rec.record(hooks.batch()))
        if hooks.wal_frames() > 1_100:
            break
    assert accepted == hooks.sent, "every delivery accepted"
    # The automatic checkpoint would have started the WAL over at ~1,000 frames: it stayed off.
    assert hooks.frames_in_use() > 1_000

    ck = checkpoint.Checkpointer(str(hooks.path), rec.gate)
    ck.start()
    try:
        for _ in range(checkpoint.EVERY):
            ck.committed()
        until(lambda: ck.restarts >= 1, what="a checkpoint that lets the WAL start over")
        # Everything committed so far is in the database file itself, without the WAL.
        alone = tmp_path / "alone.db"
        shutil.copyfile(hooks.path, alone)
        with sqlite3.connect(alone) as db:
            assert db.execute("SELECT count(*) FROM deliveries").fetchone()[0] == accepted
        # The next batch writes from the WAL's beginning.
        accepted += sum(v.status == 202 for v in rec.record(hooks.batch()))
        assert hooks.frames_in_use() < 100
    finally:
        ck.stop()
        rec.close()
    with sqlite3.connect(hooks.path) as db:
        assert db.execute("SELECT count(*) FROM deliveries").fetchone()[0] == accepted == hooks.sent
        assert db.execute("SELECT count(*) FROM run_queue").fetchone()[0] == accepted


def test_a_long_wal_is_restarted_by_force(hooks: Hooks) -> None:
    """Past ten times its restart size (as when another process's recorder keeps writing), the
    checkpoint between batches is the forcing kind (RESTART) and the WAL starts over after it
    (docs/reference-webhooks.md#durability-and-processes: the WAL does not grow without bound)."""
    rec = BatchRecorder(hooks.engine, hooks.box)
    rec.manual_checkpoints = True
    for _ in range(3):
        rec.record(hooks.batch())
    assert hooks.frames_in_use() >= 10
    ck = checkpoint.Checkpointer(str(hooks.path), rec.gate, restart_at=1)
    ck.start()
    try:
        for _ in range(checkpoint.EVERY):
            ck.committed()
        until(lambda: ck.restarts >= 1, what="a forced restart")
        rec.record(hooks.batch())
        assert hooks.frames_in_use() < 3 * 15
    finally:
        ck.stop()
        rec.close()


def test_a_checkpointer_only_for_a_sqlite_file(hooks: Hooks) -> None:
    """The recorder starts its checkpoint thread for a SQLite file only (an in-memory database has
    no WAL; PostgreSQL checkpoints by itself): docs/reference-webhooks.md#durability-and-processes."""
    ck = checkpoint.start_for(hooks.engine, BatchRecorder(hooks.engine, hooks.box).gate)
    assert ck is not None
    ck.stop()
    memory = store.open_engine("sqlite://")
    assert checkpoint.start_for(memory, BatchRecorder(memory, hooks.box).gate) is None
    memory.dispose()


def test_the_recorder_writes_every_column_of_a_delivery() -> None:
    """A delivery's row (built as a list in column order) names every column of `deliveries`
    (docs/reference-webhooks.md#webhook-ingestion: history keeps each delivery whole)."""
    assert sorted(_DELIVERY_COLUMNS) == sorted(c.name for c in store.deliveries.columns)
