"""The delivery journal, the SQLite recorder's commit point (engine/hooks/journal.py;
docs/reference-webhooks.md#durability-and-processes): a 202 means the delivery is in the journal
(one write and one fdatasync per group), SQLite is indexed behind it. A real server where the rule
is about processes (SIGKILL); real recorders on a real store made in this process elsewhere."""

from __future__ import annotations

import dataclasses
import fcntl
import os
import signal
import sqlite3
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from engine.hooks import journal
from engine.hooks.automations import history as read_history
from engine.server.ingest import Submission
from engine.server.journaled import Indexer, JournalRecorder, Pacing
from engine.serverstore import store
from tests.waiting import until
from tests.webhooks_fixtures import ActivatedStore, activated_store, history, make_trigger, server_factory  # noqa: F401

JOURNAL = {"PLATFORM_DB_BUSY_TIMEOUT_MS": "2000"}  # the journal's lock held: 503 after 2 s


class Hooks(ActivatedStore):
    """A store with one activated trigger, the submissions the HTTP process would send for it, and
    recorders on its journal (none indexes by itself: the test says when)."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir, "jr")
        self.directory = journal.journal_dir(self.path)

    def batch(self, keys: list[str]) -> list[Submission]:
        return [
            Submission(self.trigger_id, self.token, None, b'{"k": "%s"}' % k.encode(), [("x-delivery-id", k)], [],
                       "application/json", False, store.now_us())
            for k in keys
        ]  # fmt: skip

    def recorder(self) -> JournalRecorder:
        made = JournalRecorder(self.engine, self.box, self.directory)
        made.warm()
        return made

    def index(self) -> int:
        """Index everything waiting (as the indexer thread does); the records copied."""
        copied = 0
        with self.engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            more = True
            while more:
                n, _queued, more = journal.index(raw, self.directory)
                copied += n
        return copied

    def indexer(self, recorder: JournalRecorder, pacing: Pacing) -> Indexer:
        """The recorder's indexer thread, started, paced as `pacing` says."""

        def writing() -> tuple[int, int] | None:
            return None if recorder.writer is None else (recorder.writer.segment, recorder.writer.pos)

        made = Indexer(self.engine, self.directory, recorder.gate, lambda _queued: None, writing=writing, pacing=pacing)
        made.start()
        return made

    def keep_busy(self, recorder: JournalRecorder, indexer: Indexer, done: Callable[[], bool]) -> list[str]:
        """Record batches back to back (as a saturated recorder does), telling the indexer, until
        `done()`; the delivery ids answered 202."""
        ids: list[str] = []

        def one() -> bool:
            batch = self.batch([f"busy-{len(ids) + n}" for n in range(5)])
            ids.extend(v.delivery_id or "" for v in recorder.record(batch) if v.status == 202)
            indexer.poke(len(batch))
            return done()

        until(one, timeout=30, what="the indexer's looks", interval=0)
        return ids

    def rows(self, table: str) -> int:
        with sqlite3.connect(self.path) as db:
            return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


@pytest.fixture
def hooks(tmp_path: Path) -> Iterator[Hooks]:
    yield from activated_store(tmp_path, Hooks)


def _children(pid: int) -> list[int]:
    out = []
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        out += [int(child), *_children(int(child))]
    return out


def test_a_202_survives_sigkill_before_it_is_indexed(server_factory, tmp_path: Path) -> None:
    """docs/reference-webhooks.md#durability-and-processes: with the journal a 202 means the
    delivery is in the journal, and a group that cannot have the journal's lock within the busy
    timeout is refused (503, nothing recorded). With SQLite's write lock held elsewhere nothing
    can be indexed, yet deliveries are answered 202; SIGKILL of the server and its children right
    after: none of them is in SQLite, and after a restart every one is in history and its run
    executes. The journal's files are 0600 in a 0700 directory."""
    srv = server_factory(extra_env=JOURNAL)
    act = make_trigger(srv, tmp_path)
    # the recorder opens the journal once warm, which may come after the first answers
    until(lambda: (srv.data_dir / "journal" / "lock").exists(), what="the recorder to open the journal")
    held = os.open(srv.data_dir / "journal" / "lock", os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)  # another writer that never lets go: past the busy timeout, 503
    try:
        refused = httpx.post(act["url_with_token"], json={"ref": "refused"}, timeout=30)
    finally:
        os.close(held)
    assert refused.status_code == 503 and refused.headers["retry-after"]
    lock = sqlite3.connect(srv.data_dir / "platform.db", isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    try:
        ids = []
        for n in range(3):
            r = httpx.post(
                act["url_with_token"], json={"ref": f"kill-{n}"}, headers={"X-Delivery-Id": f"kill-{n}"}, timeout=30
            )
            assert r.status_code == 202, r.text
            ids.append(r.json()["delivery"])
        for pid in [*_children(srv.proc.pid), srv.proc.pid]:
            os.kill(pid, signal.SIGKILL)
        srv.proc.wait(10)
        indexed = lock.execute(f"SELECT count(*) FROM deliveries WHERE id IN ({', '.join('?' * 3)})", ids)
        assert indexed.fetchone()[0] == 0, "nothing was indexed before the kill"
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    directory = srv.data_dir / "journal"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    files = list(directory.iterdir())
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    again = server_factory(data_dir=srv.data_dir, token=srv.token, extra_env=JOURNAL)

    def ran() -> bool:
        rows = {d["id"]: d for d in history(again)}
        return all(i in rows and rows[i]["run"] and rows[i]["run"]["status"] == "succeeded" for i in ids)

    until(ran, timeout=60, what="every 202'd delivery in history, its run executed", interval=0.2)
    assert sorted(d["id"] for d in history(again)) == sorted(ids)


def test_a_torn_tail_is_ignored_and_the_journal_goes_on(hooks: Hooks) -> None:
    """docs/reference-webhooks.md#durability-and-processes: a torn last record (short, or its crc
    failing) was never answered 202: it is never indexed; the next recorder ends the segment there
    and goes on in a new one, and what it appends is indexed."""
    first = hooks.recorder()
    verdicts = first.record(hooks.batch(["t-1", "t-2", "t-3"]))
    assert [v.status for v in verdicts] == [202, 202, 202]
    writer = first.writer
    assert writer is not None
    path = journal.segment_path(hooks.directory, writer.segment)
    whole = journal.encode([["dlv_torn", hooks.trigger_id]])
    with open(path, "r+b") as f:  # a writer killed mid-write: a prefix of its group
        f.seek(writer.pos)
        f.write(whole[: len(whole) // 2])
    fd = os.open(path, os.O_RDONLY)
    try:
        payloads, _pos, why = journal.read(fd, 0)
    finally:
        os.close(fd)
    assert (len(payloads), why) == (3, "torn")
    first.shut()
    second = hooks.recorder()  # takes up the journal: the torn tail is left behind
    assert second.writer is not None and second.writer.segment > writer.segment
    corrupt = bytearray(journal.encode([["dlv_crc", hooks.trigger_id]]))
    corrupt[-1] ^= 0xFF  # whole length, wrong crc
    with open(journal.segment_path(hooks.directory, second.writer.segment), "r+b") as f:
        f.write(corrupt)
    assert [v.status for v in second.record(hooks.batch(["t-4"]))] == [202]  # ends that segment, goes on
    second.shut()
    assert hooks.index() == 4
    with sqlite3.connect(hooks.path) as db:
        ids = {r[0] for r in db.execute("SELECT id FROM deliveries")}
    assert len(ids) == 4 and not ids & {"dlv_torn", "dlv_crc"}


def test_replaying_the_journal_twice_inserts_nothing_new(hooks: Hooks) -> None:
    """docs/reference-webhooks.md#durability-and-processes: the indexed position moves in the same
    transaction as the rows; indexed again (also from the journal's start, as if the position were
    lost) no delivery, run or key is inserted twice."""
    recorder = hooks.recorder()
    recorder.record(hooks.batch([f"r-{n}" for n in range(10)]))
    recorder.record(hooks.batch(["r-1", "r-11"]))  # a retry and a new one
    recorder.shut()
    assert hooks.index() == 12
    counts = (hooks.rows("deliveries"), hooks.rows("run_queue"), hooks.rows("delivery_keys"))
    assert counts == (12, 11, 11)
    with sqlite3.connect(hooks.path) as db:  # the row as the recorder without the journal writes it
        kinds = db.execute(
            "SELECT DISTINCT typeof(received_at), typeof(status_code), typeof(decided_at), typeof(payload),"
            " typeof(run_id), typeof(duplicate_of) FROM deliveries WHERE outcome = 'queued'"
        ).fetchall()
        queued_at = db.execute("SELECT DISTINCT typeof(enqueued_at) FROM run_queue").fetchall()
    assert kinds == [("integer", "integer", "integer", "text", "null", "null")] and queued_at == [("integer",)]
    assert hooks.index() == 0
    with sqlite3.connect(hooks.path) as db:
        db.execute("UPDATE delivery_journal SET segment = 0, position = 0")
    assert hooks.index() == 12  # read again...
    assert (hooks.rows("deliveries"), hooks.rows("run_queue"), hooks.rows("delivery_keys")) == counts  # ...kept once


def test_dedupe_across_a_restart_with_an_unindexed_tail(hooks: Hooks) -> None:
    """docs/reference-webhooks.md#webhook-ingestion (de-duplication): a recorder that starts on a
    journal whose tail is not indexed yet holds that tail's keys; copies sent to it are retries
    naming the first deliveries, as they were before the restart; keys already indexed are found in
    delivery_keys. Two recorders on one journal (two server processes) see each other's keys."""
    first = hooks.recorder()
    old = first.record(hooks.batch(["d-old"]))[0]
    first.shut()
    assert hooks.index() == 1
    first = hooks.recorder()
    originals = first.record(hooks.batch(["d-1", "d-2", "d-2"]))
    assert [v.outcome for v in originals] == ["queued", "queued", "retry"]
    first.shut()
    assert hooks.rows("deliveries") == 1  # the tail is not indexed
    second = hooks.recorder()
    copies = second.record(hooks.batch(["d-1", "d-2", "d-old", "d-3"]))
    assert [(v.outcome, v.duplicate_of) for v in copies] == [
        ("retry", originals[0].delivery_id), ("retry", originals[1].delivery_id),
        ("retry", old.delivery_id), ("queued", None),
    ]  # fmt: skip
    third = hooks.recorder()  # beside the second, as another process's
    assert [v.duplicate_of for v in third.record(hooks.batch(["d-3"]))] == [copies[3].delivery_id]
    assert [v.duplicate_of for v in second.record(hooks.batch(["d-4"]))] == [None]
    assert [v.duplicate_of for v in third.record(hooks.batch(["d-4"]))] != [None]
    second.shut()
    third.shut()
    assert hooks.index() == 10
    assert hooks.rows("run_queue") == 5  # d-old, d-1, d-2, d-3, d-4: one run each


def test_indexing_waits_while_the_recorder_is_busy_and_catches_up(hooks: Hooks) -> None:
    """docs/reference-webhooks.md#durability-and-processes (indexing behind the 202s): while the
    recorder appends at the busy rate or more, the indexer leaves the backlog in the journal (no
    pass); a read meanwhile (history) still sees every 202'd delivery; once the recorder goes
    quiet the indexer copies the whole backlog without being asked."""
    recorder = hooks.recorder()
    indexer = hooks.indexer(recorder, Pacing(busy_rate=1, look_seconds=0.3))
    try:
        ids = hooks.keep_busy(recorder, indexer, lambda: indexer.deferred >= 2)  # the rate taken: busy
        indexed, passes = hooks.rows("deliveries"), indexer.passes
        ids += hooks.keep_busy(recorder, indexer, lambda: indexer.deferred >= 6)
        assert (indexer.passes, hooks.rows("deliveries")) == (passes, indexed), "no pass while busy"
        assert indexed < len(ids)
        newest = read_history(hooks.engine, "jr", limit=1).deliveries
        assert [d.id for d in newest] == [ids[-1]], "a read during the backlog sees the last 202"
        assert hooks.rows("deliveries") == len(ids)
        ids += hooks.keep_busy(recorder, indexer, lambda: indexer.deferred >= 9)
        assert hooks.rows("deliveries") < len(ids)
        until(lambda: hooks.rows("deliveries") == len(ids), timeout=30, what="the backlog indexed once quiet")
        until(lambda: indexer.passes > passes, what="the indexer's pass to end")
    finally:
        indexer.stop()
        recorder.shut()


def test_a_busy_recorder_s_backlog_is_bounded(hooks: Hooks) -> None:
    """docs/reference-webhooks.md#durability-and-processes (indexing behind the 202s): however busy
    the recorder, the indexer copies the backlog once it holds the bound's records, or once the
    bound's seconds passed since its last pass; accepts go on meanwhile (every group answered 202)."""
    recorder = hooks.recorder()
    bounds = (Pacing(backlog_records=200), Pacing(backlog_seconds=0.5))
    for bound in bounds:
        indexer = hooks.indexer(recorder, dataclasses.replace(bound, busy_rate=1, look_seconds=0.3))
        try:
            hooks.keep_busy(recorder, indexer, lambda: indexer.busy)  # noqa: B023 - called at once
            passes = indexer.passes
            ids = hooks.keep_busy(recorder, indexer, lambda: indexer.passes >= passes + 2)  # noqa: B023
            assert indexer.busy and ids
        finally:
            indexer.stop()
    recorder.shut()


def test_held_keys_are_let_go_after_an_indexing_pass(hooks: Hooks) -> None:
    """docs/reference-webhooks.md#webhook-ingestion (de-duplication) with the journal: after an
    indexing pass the recorder lets go of the keys it holds once they are more than its bound (the
    unindexed tail is read again); copies of the deliveries let go are still retries naming them
    (found in delivery_keys), and a key of the tail is still held."""
    recorder = hooks.recorder()
    first = recorder.record(hooks.batch(["h-1", "h-2", "h-3"]))
    assert hooks.index() == 3
    tail = recorder.record(hooks.batch(["h-4"]))[0]
    recorder.indexed_lately, recorder.held_after_pass = True, 2
    copies = recorder.record(hooks.batch(["h-1", "h-4", "h-5"]))
    assert [v.duplicate_of for v in copies] == [first[0].delivery_id, tail.delivery_id, None]
    held = set(recorder._held.values())  # h-4 (the tail), h-1 (found again), h-5; not h-2, h-3
    assert not recorder.indexed_lately and held == {first[0].delivery_id, tail.delivery_id, copies[2].delivery_id}
    recorder.shut()


def test_no_secret_reaches_the_journal_and_indexing_stores_the_payload(hooks: Hooks) -> None:
    """docs/reference-webhooks.md#durability-and-processes: the journal's records carry the payload in
    its deferred form with the secrets already scrubbed (a credential that arrived with a delivery is
    never on disk, not even before indexing); the indexer stores the same payload the recorder without
    the journal stores; a record written before the deferred form (its payload stored JSON) is indexed
    as it is."""
    from engine.hooks.payload import COMPACT, build_payload

    headers = [("Authorization", "Bearer sekrit-header"), ("X-Event", "push")]
    query = [("ref", "main"), ("access_token", "sekrit-query")]
    bodies = [b'{"ref": "main"}', b"not json \xff\x00"]
    batch = [
        Submission(hooks.trigger_id, hooks.token, None, body, [("X-Delivery-Id", f"s-{n}"), *headers], query,
                   "application/json", False, store.now_us())
        for n, body in enumerate(bodies)
    ]  # fmt: skip
    recorder = hooks.recorder()
    verdicts = recorder.record(batch)
    older = hooks.recorder()  # a recorder of an earlier version: the stored JSON in the record
    older.defer_payload = False
    old_sub = batch[0]._replace(headers=[("X-Delivery-Id", "s-old")], body=b'{"old": true}')
    verdicts += older.record([old_sub])
    recorder.shut()
    older.shut()
    assert [v.status for v in verdicts] == [202, 202, 202]
    written = b"".join(p.read_bytes() for p in hooks.directory.glob("*.log"))
    assert b"sekrit" not in written and b"s-old" in written
    assert hooks.index() == 3
    with sqlite3.connect(hooks.path) as db:
        stored = dict(db.execute("SELECT id, payload FROM deliveries").fetchall())
    for verdict, sub in zip(verdicts, [*batch, old_sub], strict=True):
        assert stored[verdict.delivery_id] == COMPACT(build_payload(sub.body, sub.headers, sub.query, sub.content_type))
    assert not any("sekrit" in payload for payload in stored.values())


def test_a_start_under_load_is_busy_from_the_first_window_s_worth(hooks: Hooks) -> None:
    """docs/reference-webhooks.md#durability-and-processes (indexing behind the 202s): the recorder is
    busy as soon as a whole window's worth of records came since the last look, however short the
    time (a server started under load made its first indexing passes beside the recorder: the 202s'
    worst stalls); fewer is not busy until the window ends. No thread: the rule alone."""
    recorder = hooks.recorder()
    indexer = Indexer(hooks.engine, hooks.directory, recorder.gate, lambda _queued: None,
                      pacing=Pacing(busy_rate=0.1, look_seconds=1000))  # fmt: skip
    indexer.poke(99)
    assert not indexer.wait_now() and not indexer.busy
    indexer.poke(1)
    assert indexer.wait_now() and indexer.busy, "a window's worth of records: busy at once"
    recorder.shut()


def test_a_spare_segment_is_written_paced_and_can_be_abandoned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-webhooks.md#durability-and-processes (segments): a spare is made zeroed, at its full
    size, 0600, its zeros synced a chunk at a time (a group's fdatasync never queues behind more than
    one chunk of it); a stop between two chunks abandons it and leaves no file behind."""
    directory = tmp_path / "journal"
    directory.mkdir()
    current = journal.segment_path(directory, 1)
    current.write_bytes(bytes(1 << 16))
    size = 8 * journal.SPARE_CHUNK
    synced: list[int] = []
    real = os.fdatasync

    def fdatasync(fd: int) -> None:
        synced.append(os.fstat(fd).st_blocks)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", fdatasync)
    assert not journal.make_spare(directory, 1, 1 << 14, size), "not before half of the current segment"
    assert journal.make_spare(directory, 1, 1 << 15, size)
    spare = directory / journal.SPARE
    assert spare.stat().st_size == size and stat.S_IMODE(spare.stat().st_mode) == 0o600
    assert spare.read_bytes() == bytes(size)
    assert len(synced) == 8, "one fdatasync per chunk"
    spare.unlink()
    chunks: list[int] = []
    assert not journal.make_spare(directory, 1, 1 << 15, size, stopping=lambda: chunks.append(1) or len(chunks) > 3)
    assert sorted(p.name for p in directory.iterdir()) == [current.name], "abandoned: nothing left"


@pytest.mark.parametrize("window", [2, 1])
def test_frames_go_ahead_of_the_recorder_s_answers_up_to_the_window(
    hooks: Hooks, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    """docs/reference-webhooks.md#durability-and-processes (processes): the HTTP process sends frames of
    requests ahead of the recorder's answers, at most its window (2 with the journal, 1 committing into
    the database); what arrives beyond it waits and goes in one frame when an answer comes. A real
    recorder child, held in its group by another writer holding the journal's lock; every request is
    answered 202 once the lock is let go."""
    import asyncio

    from engine.server.recorder import RecorderClient

    monkeypatch.setenv("PLATFORM_DB_BUSY_TIMEOUT_MS", "60000")
    hooks.engine.dispose()

    async def scenario() -> tuple[list[int], list[int]]:
        client = RecorderClient(f"sqlite:///{hooks.path}", hooks.data_dir, window=window)
        await client.start()
        held = os.open(hooks.directory / "lock", os.O_RDWR)
        fcntl.flock(held, fcntl.LOCK_EX)  # the recorder blocks in its first group's commit
        try:
            sent, answers = [], []
            for n, sub in enumerate(hooks.batch(["w-1", "w-2", "w-3"])):
                answers.append(asyncio.ensure_future(client.submit(*sub[:-1])))
                for _ in range(3):
                    await asyncio.sleep(0)  # the loop iteration that sends a frame
                sent.append(client._in_flight)
                assert len(client._pending) == max(0, n + 1 - window)
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
            os.close(held)
        verdicts = await asyncio.wait_for(asyncio.gather(*answers), 60)
        await client.stop()
        return sent, [v.status for v in verdicts]

    sent, statuses = asyncio.run(scenario())
    assert sent == [min(n, window) for n in (1, 2, 3)]
    assert statuses == [202, 202, 202]
    assert hooks.rows("deliveries") == 3  # the recorder's clean stop indexed its journal
