"""De-duplication keys, claimed inside the recorder's batch transaction (de-duplication: a
retry is recorded but never starts a second run, also across server processes).

One contract, two ways: `claim(db, wanted)` takes {(trigger_id, key): delivery_id} for the keys
first seen in a batch and returns, for each, the delivery that holds the key: the given one when
the key is new, else the one that took it first (in this process or in another).

- PostgreSQL, `IndexedKeys`: INSERT ... ON CONFLICT DO NOTHING RETURNING into `delivery_keys`;
  its primary key decides between server processes writing at the same moment.
- SQLite, `LoggedKeys`: keys are hashes, so inserting one into a B-tree index writes a random
  page, and in WAL mode every page a commit touches is written again: that was 2/3 of the pages
  of a group commit. SQLite has one writer at a time and the batch holds the write lock (BEGIN
  IMMEDIATE), so the recorder can decide by itself, with what is committed in front of it: new
  keys are appended to `delivery_key_log` (rowid order: only its right edge is written), the log
  is kept in memory (read forward from the last seq seen, under the lock, so rows other
  processes wrote count too), and a key not in the log is looked up in `delivery_keys`. A long
  log is merged into `delivery_keys` in sorted runs, one range of key digests per batch (a run
  touches a contiguous part of the index once, and no batch waits for a whole merge); then the
  merged rows are deleted, all but the newest, so that new rows keep getting larger seqs.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from typing import Any, Protocol

from sqlalchemy.engine import Connection

Key = tuple[str, str]  # (trigger_id, dedupe_key)
_KEY_COLUMNS = ("trigger_id", "dedupe_key", "delivery_id")
RANGES = 64  # a key's range: the first two hex digits of its digest, divided by 4
MERGE_AT = 32_768  # log rows that start a merge (a merge step then takes ~1/64 of them)
_INSERT_ROWS = 1_000  # rows per multi-row INSERT of a merge run (bound parameters stay small)
_DELETE_ROWS = 4_096  # merged log rows deleted per batch once every range is merged


class Driver:
    """The DBAPI connection under a SQLAlchemy Connection (sqlite3 or psycopg), and the
    transactions it runs itself. Straight on the driver: SQLAlchemy's per-statement and
    per-transaction machinery is measurable at the recorder's rate (~50 us a batch)."""

    def __init__(self, conn: Connection) -> None:
        self.raw: Any = conn.connection.dbapi_connection
        self.sqlite = conn.dialect.name == "sqlite"
        self.mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"

    def begin(self) -> None:
        """SQLite: take the write lock up front (no read-to-write upgrade deadlocks; the key log
        relies on being the only writer). psycopg begins with the first statement."""
        if self.sqlite:
            self.raw.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.raw.commit()

    def rollback(self) -> None:
        try:
            self.raw.rollback()
        except Exception:  # noqa: BLE001 - the connection is dropped after a failed batch anyway
            pass

    @staticmethod
    def marks(n: int) -> str:
        """n placeholders for `rows` / `execute`, which take `?` and speak the driver's style."""
        return ", ".join(["?"] * n)

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(self.raw.execute(sql.replace("?", self.mark), tuple(params)).fetchall())

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.raw.execute(sql.replace("?", self.mark), tuple(params))

    def insert(self, table: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]], suffix: str = "") -> list[Any]:
        """One multi-row INSERT: one driver call per batch (executemany steps once per row,
        dropping and re-taking the GIL each time). Returns what a RETURNING suffix returns."""
        group = "(" + ", ".join([self.mark] * len(columns)) + ")"
        values = ", ".join([group] * len(rows))
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES {values}{suffix}"
        cursor = self.raw.execute(sql, tuple(itertools.chain.from_iterable(rows)))
        return list(cursor.fetchall()) if "RETURNING" in suffix else []


class Keys(Protocol):
    def claim(self, db: Driver, wanted: dict[Key, str]) -> dict[Key, str]: ...

    def reset(self) -> None:
        """After a batch that did not commit: forget anything learnt during it."""

    def warm(self, db: Driver) -> None:
        """Before the first batch, outside any write transaction: read what can be read."""


def keys_for(dialect: str) -> Keys:
    """PLATFORM_KEY_MERGE_AT (log rows that start a merge) exists for tests and tuning."""
    if dialect != "sqlite":
        return IndexedKeys()
    return LoggedKeys(int(os.environ.get("PLATFORM_KEY_MERGE_AT", MERGE_AT)))


class IndexedKeys:
    """Every key straight into `delivery_keys`; first writer wins (PostgreSQL)."""

    def claim(self, db: Driver, wanted: dict[Key, str]) -> dict[Key, str]:
        taken = db.insert(
            "delivery_keys",
            _KEY_COLUMNS,
            [(k[0], k[1], d) for k, d in wanted.items()],
            suffix=" ON CONFLICT DO NOTHING RETURNING trigger_id, dedupe_key",
        )
        winners = {(r[0], r[1]): wanted[(r[0], r[1])] for r in taken}
        lost = [k for k in wanted if k not in winners]
        if lost:
            winners.update(indexed_holders(db, lost))
        return winners

    def reset(self) -> None:
        pass

    def warm(self, db: Driver) -> None:
        pass


class LoggedKeys:
    """Keys appended to `delivery_key_log` and merged into `delivery_keys` in sorted runs
    (SQLite; see the module's text). One per recorder; its memory is only a copy of committed
    rows, except that a merge step drops the keys it merged into delivery_keys; the recorder calls
    `reset` after a batch that did not commit, and the next batch reads the whole log again."""

    def __init__(self, merge_at: int = MERGE_AT) -> None:
        self.merge_at = max(1, merge_at)
        # Per range: key -> (delivery_id, seq). Holds every log row with seq <= self._upto
        # (and possibly rows already merged and deleted: still true, dropped in time).
        self._seen: list[dict[Key, tuple[str, int]]] = [{} for _ in range(RANGES)]
        self._upto = 0

    def reset(self) -> None:
        self._seen = [{} for _ in range(RANGES)]
        self._upto = 0

    def warm(self, db: Driver) -> None:
        """Read the log as it is (committed rows only: a copy that stays true; the first batch
        reads on from there under the write lock)."""
        self._catch_up(db)

    def claim(self, db: Driver, wanted: dict[Key, str]) -> dict[Key, str]:
        low, merge_upto, next_range = self._catch_up(db)
        winners: dict[Key, str] = {}
        misses: list[Key] = []
        for key in wanted:
            held = self._seen[key_range(key[1])].get(key)
            if held is not None:
                winners[key] = held[0]
            else:
                misses.append(key)
        if misses:
            winners.update(indexed_holders(db, misses))
            new = [(k[0], k[1], wanted[k]) for k in misses if k not in winners]
            if new:
                db.insert("delivery_key_log", _KEY_COLUMNS, new)
                winners.update({(t, k): d for t, k, d in new})
        self._merge_step(db, low, merge_upto, next_range)
        return winners

    def _catch_up(self, db: Driver) -> tuple[int | None, int | None, int]:
        """Read the log rows committed since the last batch (ours and other processes'); return
        the log's lowest seq and the merge in progress, if any."""
        for seq, trigger_id, key, delivery in db.rows(
            "SELECT seq, trigger_id, dedupe_key, delivery_id FROM delivery_key_log"
            " WHERE seq > ? ORDER BY seq",
            (self._upto,),
        ):
            self._seen[key_range(key)][(trigger_id, key)] = (delivery, seq)
            self._upto = seq
        low, merge_upto, next_range = db.rows(
            "SELECT (SELECT min(seq) FROM delivery_key_log),"
            " (SELECT upto FROM delivery_key_merge WHERE id = 1),"
            " (SELECT next_range FROM delivery_key_merge WHERE id = 1)"
        )[0]
        if low is not None and self.size() > 2 * (self._upto - low + 1) + 1024:
            # Most of what we hold was merged (here or by another process) and left the log.
            self._seen = [{k: v for k, v in part.items() if v[1] >= low} for part in self._seen]
        return low, merge_upto, next_range or 0

    def _merge_step(self, db: Driver, low: int | None, upto: int | None, next_range: int) -> None:
        """One step of a merge per batch, so that no batch waits for a whole merge: first, range
        by range, the keys of the log rows with seq < upto go into delivery_keys in key order
        (and leave our memory: they are found there now); then those rows leave the log,
        _DELETE_ROWS a batch."""
        if upto is None:
            if low is None or self._upto - low + 1 < self.merge_at:
                return
            upto, next_range = self._upto, 0  # the newest row stays: seqs keep growing
            db.execute("INSERT INTO delivery_key_merge (id, upto, next_range) VALUES (1, ?, 0)", (upto,))
        if next_range < RANGES:
            part = self._seen[next_range]
            merged = [key for key, held in part.items() if held[1] < upto]
            run = sorted((key[0], key[1], part[key][0]) for key in merged)
            for start in range(0, len(run), _INSERT_ROWS):
                chunk = run[start : start + _INSERT_ROWS]
                db.insert("delivery_keys", _KEY_COLUMNS, chunk, suffix=" ON CONFLICT DO NOTHING")
            for key in merged:
                del part[key]
            db.execute("UPDATE delivery_key_merge SET next_range = ? WHERE id = 1", (next_range + 1,))
            return
        bound = min(upto, (low if low is not None else upto) + _DELETE_ROWS)
        db.execute("DELETE FROM delivery_key_log WHERE seq < ?", (bound,))
        if bound >= upto:
            db.execute("DELETE FROM delivery_key_merge WHERE id = 1")

    def size(self) -> int:
        return sum(len(part) for part in self._seen)


def key_range(key: str) -> int:
    """From the first two hex digits of the digest in `key:<hex>` / `body:<hex>:<minute>`
    (engine.hooks.payload.dedupe_key): keys of one range sit together in delivery_keys' index."""
    start = key.find(":") + 1
    digits = key[start : start + 2]
    try:
        return int(digits, 16) * RANGES // 256 if len(digits) == 2 else 0
    except ValueError:
        return 0


def indexed_holders(db: Driver, keys: list[Key]) -> dict[Key, str]:
    """The deliveries holding `keys` in delivery_keys (keys not there are left out)."""
    by_trigger: dict[str, list[str]] = {}
    for trigger_id, key in keys:
        by_trigger.setdefault(trigger_id, []).append(key)
    found: dict[Key, str] = {}
    for trigger_id, group in by_trigger.items():
        result = db.rows(
            "SELECT dedupe_key, delivery_id FROM delivery_keys WHERE trigger_id = ?"
            f" AND dedupe_key IN ({db.marks(len(group))})",
            (trigger_id, *group),
        )
        found.update({(trigger_id, r[0]): r[1] for r in result})
    return found
