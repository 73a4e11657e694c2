"""De-duplication on SQLite through the key log (engine/server/keys.py; docs/reference-webhooks.md#webhook-ingestion: a
retry is recorded but never starts a second run, also across server processes). Real SQLite files: recorders
in this process on the store of a real server, and two real server processes sharing one data dir, with merges
made frequent."""

from __future__ import annotations

import asyncio
import random
import shutil
import sqlite3
from pathlib import Path

import httpx
import pytest

from engine.hooks.payload import dedupe_key
from engine.hooks.secrets import SecretBox
from engine.server import keys
from engine.server.ingest import BatchRecorder, Submission, Verdict
from engine.serverstore import store
from tests.waiting import until
from tests.webhooks_fixtures import history, make_trigger, module_server_factory, server_factory  # noqa: F401


class Store:
    """A server's data dir after the server stopped: a trigger to record deliveries for."""

    def __init__(self, data_dir: Path, trigger_id: str, token: str) -> None:
        self.data_dir, self.trigger_id, self.token = data_dir, trigger_id, token

    def recorder(self, merge_at: int) -> BatchRecorder:
        rec = BatchRecorder(
            store.open_engine(f"sqlite:///{self.data_dir / 'platform.db'}"), SecretBox(self.data_dir)
        )
        rec._keys = keys.LoggedKeys(merge_at)
        return rec

    def send(self, rec: BatchRecorder, names: list[str]) -> list[Verdict]:
        return rec.record(
            [
                Submission(
                    self.trigger_id,
                    self.token,
                    None,
                    b"{}",
                    [("x-delivery-id", name)],
                    [],
                    "application/json",
                    False,
                    store.now_us(),
                )
                for name in names
            ]
        )

    def count(self, sql: str) -> int:
        with sqlite3.connect(self.data_dir / "platform.db") as db:
            return int(db.execute(sql).fetchone()[0])


@pytest.fixture(scope="module")
def stopped_store(module_server_factory, tmp_path_factory: pytest.TempPathFactory) -> Store:  # noqa: F811
    """One real server's data dir with a trigger, made once per module; the server stopped."""
    srv = module_server_factory()
    act = make_trigger(srv, tmp_path_factory.mktemp("store"))
    srv.stop()
    trigger_id, token = act["url_with_token"].rsplit("/", 2)[-2:]
    return Store(srv.data_dir, trigger_id, token)


@pytest.fixture
def sqlite_store(stopped_store: Store, tmp_path: Path) -> Store:
    """A copy of that data dir for this test alone (the files of a stopped server, so a copy is the same store)."""
    data_dir = tmp_path / "data"
    shutil.copytree(stopped_store.data_dir, data_dir)
    return Store(data_dir, stopped_store.trigger_id, stopped_store.token)


def _batches(names: list[str], size: int) -> list[list[str]]:
    return [names[i : i + size] for i in range(0, len(names), size)]


def test_keys_hold_through_merges_and_for_a_new_recorder(sqlite_store: Store) -> None:
    """Keys merged out of the log into delivery_keys, still in the log, or mid-merge are all
    found: every copy is a retry naming the first delivery, in the same and in a new recorder."""
    rec = sqlite_store.recorder(merge_at=40)
    names = [f"d-{n}" for n in range(1000)]
    first: dict[str, str] = {}
    for batch in _batches(names, 7):
        for name, verdict in zip(batch, sqlite_store.send(rec, batch), strict=True):
            assert (verdict.status, verdict.outcome) == (202, "queued")
            first[name] = verdict.delivery_id
    merged = sqlite_store.count("SELECT count(*) FROM delivery_keys")
    in_log = sqlite_store.count("SELECT count(*) FROM delivery_key_log")
    # Merges ran and shortened the log; every key is in one or the other.
    assert merged > 0 and in_log < len(names) <= merged + in_log, (merged, in_log)
    for recorder in (rec, sqlite_store.recorder(merge_at=40)):
        for batch in _batches(random.Random(7).sample(names, len(names)), 9):
            for name, verdict in zip(batch, sqlite_store.send(recorder, batch), strict=True):
                assert (verdict.outcome, verdict.duplicate_of) == ("retry", first[name])
    assert sqlite_store.count("SELECT count(*) FROM run_queue") == 1000


def test_two_recorders_on_one_file_start_each_key_once(sqlite_store: Store) -> None:
    """Two recorders (two connections, as two server processes) alternating batches of new keys
    and copies, while both merge: each key starts exactly one run, and every copy names it."""
    a, b = sqlite_store.recorder(merge_at=30), sqlite_store.recorder(merge_at=30)
    rng = random.Random(11)
    first: dict[str, str] = {}
    sent = 0
    for turn in range(300):
        batch = [f"k-{rng.randrange(600)}" for _ in range(rng.randrange(1, 12))]
        sent += len(batch)
        for name, verdict in zip(batch, sqlite_store.send((a, b)[turn % 2], batch), strict=True):
            if name in first:
                assert (verdict.outcome, verdict.duplicate_of) == ("retry", first[name])
            else:
                assert verdict.outcome == "queued"
                first[name] = verdict.delivery_id
    assert sqlite_store.count("SELECT count(*) FROM run_queue") == len(first)
    assert sqlite_store.count("SELECT count(*) FROM deliveries") == sent
    assert sqlite_store.count("SELECT count(*) FROM delivery_keys") > 100  # merges ran meanwhile
    assert sqlite_store.count(
        "SELECT count(DISTINCT dedupe_key) FROM deliveries WHERE outcome = 'queued'"
    ) == len(first)


def test_a_batch_that_rolls_back_claims_no_key(sqlite_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch whose transaction fails answers 503 and keeps nothing: its keys are not taken, so
    the sender's retry starts the run (not a retry of a delivery that was never recorded); and
    the merge step it rolled back loses no earlier key."""
    rec = sqlite_store.recorder(merge_at=250)
    warm = [f"warm-{n}" for n in range(300)]
    first = {}
    for batch in _batches(warm, 10):  # a merge starts at the 26th batch
        first.update({n: v.delivery_id for n, v in zip(batch, sqlite_store.send(rec, batch), strict=True)})
    # The failing batch's merge step is for a range that holds keys of this merge.
    upto = sqlite_store.count("SELECT upto FROM delivery_key_merge")
    step = sqlite_store.count("SELECT next_range FROM delivery_key_merge")
    in_step = [n for n in warm[: upto - 1] if keys.key_range(dedupe_key({"x-delivery-id": n}, b"", 0)) == step]
    assert in_step, (upto, step)
    real_insert = keys.Driver.insert

    def failing(self, table, *args, **kwargs):  # the run queue insert fails once
        if table == "run_queue":
            raise sqlite3.OperationalError("disk I/O error")
        return real_insert(self, table, *args, **kwargs)

    monkeypatch.setattr(keys.Driver, "insert", failing)
    assert [v.status for v in sqlite_store.send(rec, ["lost-1", "lost-2"])] == [503, 503]
    monkeypatch.setattr(keys.Driver, "insert", real_insert)
    assert [v.outcome for v in sqlite_store.send(rec, ["lost-1", "lost-2"])] == ["queued", "queued"]
    for batch in _batches(warm, 50):
        for name, verdict in zip(batch, sqlite_store.send(rec, batch), strict=True):
            assert (verdict.outcome, verdict.duplicate_of) == ("retry", first[name])
    assert sqlite_store.count("SELECT count(*) FROM deliveries WHERE dedupe_key IS NOT NULL") == 300 + 2 + 300


def test_two_server_processes_on_one_sqlite_dir_start_each_key_once(server_factory, tmp_path: Path) -> None:
    """Two real `platform server` processes on one SQLite data dir, merges every 25 keys: copies
    of each delivery sent to both at the same moment start exactly one run per key."""
    env = {"PLATFORM_KEY_MERGE_AT": "25"}
    a = server_factory(extra_env=env, args=("--workers", "0"))
    b = server_factory(data_dir=a.data_dir, token=a.token, extra_env=env, args=("--workers", "0"))
    act = make_trigger(a, tmp_path)
    urls = [act["url_with_token"], act["url_with_token"].replace(a.url, b.url)]

    async def burst() -> list[tuple[str, dict]]:
        # 300 requests over 40 connections: a request waits for a free connection as long as it takes (on a
        # loaded machine the pool can stay busy longer than the 30 s a request itself may take)
        timeout = httpx.Timeout(30, pool=None)
        async with httpx.AsyncClient(timeout=timeout, limits=httpx.Limits(max_connections=40)) as client:

            async def one(n: int, url: str) -> tuple[str, dict]:
                r = await client.post(url, content=b"{}", headers={"X-Delivery-Id": f"same-{n}"})
                assert r.status_code == 202, r.text
                return f"same-{n}", r.json()

            return await asyncio.gather(*(one(n, url) for n in range(150) for url in urls))

    answers = asyncio.run(burst())
    accepted = {name: doc["delivery"] for name, doc in answers if doc["status"] == "accepted"}
    assert len(accepted) == 150
    assert all(doc["duplicate_of"] == accepted[name] for name, doc in answers if doc["status"] == "retry")
    rows = until(  # each poll reads 300 deliveries from the server: every 0.5 s, not 50 ms
        lambda: history(b, limit=1000) if len(history(b, limit=1000)) == 300 else None, what="history", interval=0.5
    )
    assert sum(1 for d in rows if d["outcome"] == "queued") == 150
