"""Webhook ingestion's durable half (spec 1, Webhook ingestion / Authentication / Events / Errors).

Requests hand a `Submission` to the `GroupCommitter`; its thread authenticates a whole batch
against the current trigger rows and records every accepted delivery, its de-duplication key
and its queued run in ONE transaction (group commit: one durable commit for many deliveries,
off the event loop). A request is answered only after that commit, so every 202 is in history.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import operator
import queue
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from engine.db.store import deliveries, delivery_keys, now_us, run_queue, triggers
from engine.hooks.models import TriggerDefinition
from engine.hooks.payload import build_payload, dedupe_key
from engine.hooks.secrets import SecretBox, token_matches
from engine.hooks.signature import verify

log = logging.getLogger("platform.server")
MAX_BATCH = 256


@dataclass
class Submission:
    trigger_id: str
    path_token: str | None
    bearer: str | None
    body: bytes
    headers: list[tuple[str, str]]
    query: list[tuple[str, str]]
    content_type: str
    too_large: bool
    received_us: int = field(default_factory=now_us)
    future: asyncio.Future[Verdict] | None = None
    loop: asyncio.AbstractEventLoop | None = None


@dataclass
class Verdict:
    status: int
    delivery_id: str | None = None
    outcome: str | None = None
    duplicate_of: str | None = None


@dataclass
class _TriggerState:
    row: Any
    definition: TriggerDefinition
    secret: bytes | None


class GroupCommitter:
    """One thread, one transaction per batch of submissions."""

    def __init__(self, engine: Engine, box: SecretBox, on_enqueued: Callable[[], None] | None = None) -> None:
        self.engine = engine
        self.box = box
        self.on_enqueued = on_enqueued or (lambda: None)
        self._queue: queue.SimpleQueue[list[Submission] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="group-commit", daemon=True)
        self._parsed: dict[tuple[str, str, str | None], tuple[TriggerDefinition, bytes | None]] = {}
        self._pending: list[Submission] = []
        self._conn: Connection | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._queue.put(None)
        self._thread.join(30)

    async def submit(self, sub: Submission) -> Verdict:
        loop = asyncio.get_running_loop()
        sub.loop, sub.future = loop, loop.create_future()
        if not self._pending:
            loop.call_soon(self._hand_over)
        self._pending.append(sub)
        return await sub.future

    def _hand_over(self) -> None:
        """Once per event-loop iteration: everything submitted meanwhile goes to the writer as one
        list (one wake-up of the writer thread, not one per request)."""
        pending, self._pending = self._pending, []
        self._queue.put(pending)

    def _loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                self._close()
                return
            batch = list(first)
            stopping = False
            while len(batch) < MAX_BATCH:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stopping = True
                    break
                batch.extend(more)
            self._commit(batch)
            if stopping:
                self._close()
                return

    def _commit(self, batch: list[Submission]) -> None:
        try:
            verdicts = self._record(batch)
        except SQLAlchemyError as exc:
            # Delivery could not be recorded: 503 so the sender retries (spec 1 Errors).
            log.warning("delivery batch of %d not recorded: %s", len(batch), str(exc).splitlines()[0])
            verdicts = [Verdict(503) for _ in batch]
            self._close()
        except Exception:  # noqa: BLE001 - never leave a request waiting forever
            log.exception("delivery batch failed")
            verdicts = [Verdict(503) for _ in batch]
            self._close()
        # One wake-up of each event loop per batch, not one per delivery.
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Verdict], Verdict]]] = {}
        for sub, verdict in zip(batch, verdicts, strict=True):
            assert sub.loop is not None and sub.future is not None
            by_loop.setdefault(sub.loop, []).append((sub.future, verdict))
        for loop, pairs in by_loop.items():
            loop.call_soon_threadsafe(_resolve_all, pairs)
        if any(v.outcome == "queued" for v in verdicts):
            self.on_enqueued()

    def _state(self, row: Any) -> _TriggerState:
        key = (row.id, row.definition, row.hmac_secret_sealed)
        parsed = self._parsed.get(key)
        if parsed is None:
            definition = TriggerDefinition.model_validate_json(row.definition)
            secret = self.box.open(row.hmac_secret_sealed) if row.hmac_secret_sealed else None
            if len(self._parsed) > 10_000:
                self._parsed.clear()
            parsed = self._parsed[key] = (definition, secret)
        return _TriggerState(row, parsed[0], parsed[1])

    def _authenticate(self, sub: Submission, state: _TriggerState | None) -> str | None:
        """The way in that holds (spec 1 Authentication 1-3), or None. Constant-time throughout."""
        stored = state.row.token_hash if state else None
        by_path = token_matches(sub.path_token, stored) if sub.path_token is not None else False
        by_bearer = token_matches(sub.bearer, stored) if sub.bearer is not None else False
        by_hmac = False
        if state and stored and state.definition.webhook.hmac and state.secret and not sub.too_large:
            config = state.definition.webhook.hmac
            header = _header(sub.headers, config.header)
            by_hmac = verify(state.secret, sub.body, header, config)
        if not stored:
            return None  # unknown or never activated: nothing can authenticate
        return "path" if by_path else "bearer" if by_bearer else "hmac" if by_hmac else None

    def _connection(self) -> Connection:
        """The writer's own connection, kept open (no pool checkout and reset per batch)."""
        if self._conn is None:
            self._conn = self.engine.connect().execution_options(immediate=True)
        return self._conn

    def _close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except SQLAlchemyError:
                pass
            self._conn = None

    def _record(self, batch: list[Submission]) -> list[Verdict]:
        conn = self._connection()
        with conn.begin():
            ids = sorted({s.trigger_id for s in batch})
            found = conn.exec_driver_sql(
                f"SELECT {_TRIGGER_COLUMNS} FROM triggers WHERE id IN ({_marks(conn, len(ids))})", tuple(ids)
            )
            rows = {r.id: r for r in found}
            verdicts: list[Verdict | None] = [None] * len(batch)
            pending: list[tuple[int, dict[str, Any]]] = []
            for i, sub in enumerate(batch):
                row = rows.get(sub.trigger_id)
                state = self._state(row) if row is not None else None
                method = self._authenticate(sub, state)
                if method is None or state is None:
                    # 413 is decided by size alone, before authentication: it reveals no trigger.
                    verdicts[i] = Verdict(413 if sub.too_large else 404)
                    continue
                delivery = _delivery_row(sub, state, method)
                if sub.too_large or not state.row.enabled:
                    # Refused after authentication passed: recorded, no payload kept.
                    code = 413 if sub.too_large else 409
                    delivery.update(
                        status_code=code,
                        outcome="refused",
                        payload=None,
                        dedupe_key=None,
                        detail="body larger than 1 MiB" if sub.too_large else "trigger is disabled",
                    )
                    verdicts[i] = Verdict(code, delivery["id"], "refused")
                pending.append((i, delivery))
            self._dedupe(conn, pending, verdicts)
            if pending:
                # Driver-level executemany: the per-row cost of Core parameter processing is what
                # limits ingestion throughput (bench/webhooks.py).
                _executemany(conn, deliveries, _DELIVERY_COLUMNS, [d for _, d in pending])
                queued = [
                    {
                        "delivery_id": d["id"],
                        "automation_id": d["automation_id"],
                        "state": "queued",
                        "enqueued_at": d["received_at"],
                        "lease_owner": None,
                        "lease_until": None,
                        "attempts": 0,
                    }
                    for _, d in pending
                    if d["outcome"] == "queued"
                ]
                if queued:
                    _executemany(conn, run_queue, _QUEUE_COLUMNS, queued)
        return [v or Verdict(503) for v in verdicts]

    def _dedupe(
        self, conn: Connection, pending: list[tuple[int, dict[str, Any]]], verdicts: list[Verdict | None]
    ) -> None:
        """A retry is recorded but never starts a second run (spec 1 Events 2), across processes:
        the (trigger, key) primary key decides, first writer wins."""
        candidates = sorted(
            ((d["trigger_id"], d["dedupe_key"]), i, d) for i, d in pending if d["outcome"] == "queued"
        )
        first: dict[tuple[str, str], dict[str, Any]] = {}
        for key, _i, d in candidates:
            first.setdefault(key, d)
        inserted: set[tuple[str, str]] = set()
        if first and conn.dialect.name == "sqlite":
            # BEGIN IMMEDIATE holds SQLite's one write lock: read-then-insert cannot race.
            taken = _existing_keys(conn, list(first))
            fresh = [(k, d) for k, d in first.items() if k not in taken]
            if fresh:
                _insert_rows(
                    conn,
                    "delivery_keys",
                    ("trigger_id", "dedupe_key", "delivery_id"),
                    [(k[0], k[1], d["id"]) for k, d in fresh],
                )
            inserted = {k for k, _ in fresh}
        elif first:
            # PostgreSQL: several processes insert at once; the primary key decides, first wins.
            stmt = _insert_ignore(conn, delivery_keys).returning(
                delivery_keys.c.trigger_id, delivery_keys.c.dedupe_key
            )
            result = conn.execute(
                stmt,
                [{"trigger_id": k[0], "dedupe_key": k[1], "delivery_id": d["id"]} for k, d in first.items()],
            )
            inserted = {(r[0], r[1]) for r in result}
        lost = [k for k in first if k not in inserted]
        existing = _existing_keys(conn, lost) if lost else {}
        for key, i, d in candidates:
            winner = first[key]["id"] if key in inserted else existing.get(key)
            if winner == d["id"]:
                verdicts[i] = Verdict(202, d["id"], "queued")
            else:
                d.update(outcome="retry", duplicate_of=winner, detail="retry of an earlier delivery")
                verdicts[i] = Verdict(202, d["id"], "retry", winner)


def _existing_keys(conn: Connection, keys: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    by_trigger: dict[str, list[str]] = {}
    for trigger_id, key in keys:
        by_trigger.setdefault(trigger_id, []).append(key)
    found: dict[tuple[str, str], str] = {}
    for trigger_id, group in by_trigger.items():
        result = conn.exec_driver_sql(
            "SELECT dedupe_key, delivery_id FROM delivery_keys WHERE trigger_id = "
            f"{_marks(conn, 1)} AND dedupe_key IN ({_marks(conn, len(group))})",
            (trigger_id, *group),
        )
        found.update({(trigger_id, r[0]): r[1] for r in result})
    return found


def _marks(conn: Connection, n: int) -> str:
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    return ", ".join([mark] * n)


_TRIGGER_COLUMNS = ", ".join(c.name for c in triggers.columns)


_DELIVERY_COLUMNS = tuple(c.name for c in deliveries.columns)
_QUEUE_COLUMNS = tuple(c.name for c in run_queue.columns)


def _executemany(conn: Connection, table: Any, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    values = operator.itemgetter(*columns)
    _insert_rows(conn, table.name, columns, [values(row) for row in rows])


def _insert_rows(conn: Connection, table: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    """One multi-row INSERT statement: one driver call per batch. (executemany steps once per
    row, dropping and re-taking the GIL each time: a convoy behind the busy event loop.)"""
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    group = "(" + ", ".join([mark] * len(columns)) + ")"
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES " + ", ".join([group] * len(rows))
    conn.exec_driver_sql(sql, tuple(itertools.chain.from_iterable(rows)))


def _insert_ignore(conn: Connection, table: Any) -> Any:
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table).on_conflict_do_nothing()
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table).on_conflict_do_nothing()


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    lower = name.lower()
    for key, value in headers:
        if key.lower() == lower:
            return value
    return None


def _delivery_row(sub: Submission, state: _TriggerState, method: str) -> dict[str, Any]:
    hmac_header = state.definition.webhook.hmac.header if state.definition.webhook.hmac else None
    payload = build_payload(sub.body, sub.headers, sub.query, sub.content_type, hmac_header)
    return {
        "id": _delivery_id(sub.received_us),
        "trigger_id": state.row.id,
        "automation_id": state.row.automation_id,
        "received_at": sub.received_us,
        "status_code": 202,
        "outcome": "queued",
        "auth_method": method,
        "dedupe_key": dedupe_key(dict(sub.headers), sub.body, sub.received_us),
        "duplicate_of": None,
        "payload": json.dumps(payload, separators=(",", ":")),
        "body_bytes": len(sub.body),
        "run_id": None,
        "detail": None,
        "updated_at": sub.received_us,
    }


def _delivery_id(received_us: int) -> str:
    """Time-ordered ids: new rows append to the right edge of the primary-key B-tree instead of
    touching a random page each (fewer pages per group commit)."""
    return f"dlv_{received_us:014x}{secrets.token_hex(5)}"


def _resolve_all(pairs: list[tuple[asyncio.Future[Verdict], Verdict]]) -> None:
    for future, verdict in pairs:
        if not future.done():
            future.set_result(verdict)
