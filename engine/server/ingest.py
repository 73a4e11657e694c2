"""Webhook ingestion's durable half (docs/reference-webhooks.md#endpoints: ways in, de-duplication, answers).

`BatchRecorder.record` authenticates a whole batch of submissions against the current trigger
rows and records every delivery, its de-duplication key and its queued run in ONE transaction
(group commit: one durable commit for many deliveries). It runs in the server's recorder process
(engine/server/recorder.py); a request is answered only after that commit, so every 202 is in
history.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from engine.auth.bearer import hash_matches, token_hash
from engine.hooks.journal import DELIVERY_COLUMNS
from engine.hooks.models import TriggerDefinition, delivery_id
from engine.hooks.payload import COMPACT, build_payload, dedupe_key, deferred_payload
from engine.hooks.secrets import SecretBox
from engine.hooks.signature import verify
from engine.server.keys import Driver, Keys, keys_for
from engine.serverstore import store
from engine.serverstore.store import run_queue

log = logging.getLogger("platform.server")


class Submission(NamedTuple):
    """One request as the front door read it (plain values: it crosses a pipe)."""

    trigger_id: str
    path_token: str | None
    bearer: str | None
    body: bytes
    headers: list[tuple[str, str]]
    query: list[tuple[str, str]]
    content_type: str
    too_large: bool
    received_us: int


class Verdict(NamedTuple):
    status: int
    delivery_id: str | None = None
    outcome: str | None = None
    duplicate_of: str | None = None


REFUSED = Verdict(503)  # delivery could not be recorded: the sender retries (503, nothing recorded)


@dataclass
class _TriggerState:
    row: _TriggerRow
    definition: TriggerDefinition
    secret: bytes | None


class BatchRecorder:
    """Records batches of submissions, one transaction each, on one kept-open connection."""

    # Rows carry the payload's deferred form (engine.hooks.payload.deferred_payload) for whoever stores
    # them later (the journal's indexer); rows inserted here at once carry the stored JSON.
    defer_payload = False

    def __init__(self, engine: Engine, box: SecretBox) -> None:
        self.engine = engine
        self.box = box
        self._parsed: dict[tuple[str, str, str | None], tuple[TriggerDefinition, bytes | None]] = {}
        self._conn: Connection | None = None
        self._db: Driver | None = None
        self._keys: Keys = keys_for(engine.dialect.name)
        # Held for each batch's transaction: the recorder's checkpointer (engine.server.checkpoint)
        # takes it for the last step of a checkpoint, between batches.
        self.gate = threading.Lock()
        self.manual_checkpoints = False  # set by the recorder when a Checkpointer copies the WAL back

    def record(self, batch: list[Submission]) -> list[Verdict]:
        """The verdict of each submission, in order; all 503 when the batch could not be
        recorded (nothing of it is kept: its transaction is rolled back)."""
        try:
            db = self._driver()
            with self.gate:
                db.begin()
                try:
                    verdicts = self._statements(db, batch)
                    db.commit()
                except BaseException:
                    db.rollback()
                    raise
            return verdicts
        except Exception as exc:  # noqa: BLE001 - never leave a request without an answer
            dbapi = self.engine.dialect.dbapi
            if isinstance(exc, SQLAlchemyError) or (dbapi is not None and isinstance(exc, dbapi.Error)):
                log.warning("delivery batch of %d not recorded: %s", len(batch), str(exc).splitlines()[0])
            else:
                log.error("delivery batch of %d failed", len(batch), exc_info=exc)
            self.close()
            return [REFUSED] * len(batch)

    def warm(self) -> None:
        """Before the first request: open the connection, parse every trigger (and open its HMAC
        secret) and read the key log, so that the first batches are not the slow ones. Only reads
        committed rows; a failure here is left for the first batch to report."""
        try:
            db = self._driver()
            for row in db.rows(f"SELECT {_TRIGGER_COLUMNS} FROM triggers LIMIT 10000"):
                self._state(_TriggerRow._make(row))
            self._keys.warm(db)
            db.commit()
        except Exception as exc:  # noqa: BLE001 - the first batch reports it, as a 503
            log.warning("delivery recorder warm-up: %s", str(exc).splitlines()[0])
            self.close()

    def _driver(self) -> Driver:
        """The kept-open connection (opened again after a failed batch dropped it)."""
        if self._db is None:
            self._conn = self.engine.connect()
            self._db = Driver(self._conn)
            if self.manual_checkpoints and self._db.sqlite:
                self._db.execute("PRAGMA wal_autocheckpoint=0")  # the Checkpointer's thread does them
        return self._db

    def close(self) -> None:
        """Drop the connection (after a batch that did not commit, or at exit)."""
        self._keys.reset()
        self._db = None
        if self._conn is not None:
            try:
                self._conn.close()
            except SQLAlchemyError:
                pass
            self._conn = None

    def _state(self, row: _TriggerRow) -> _TriggerState:
        key = (row.id, row.definition, row.hmac_secret_sealed)
        parsed = self._parsed.get(key)
        if parsed is None:
            definition = TriggerDefinition.model_validate_json(row.definition)
            secret = self.box.open(row.hmac_secret_sealed) if row.hmac_secret_sealed else None
            if len(self._parsed) > 10_000:
                self._parsed.clear()
            parsed = self._parsed[key] = (definition, secret)
        return _TriggerState(row, parsed[0], parsed[1])

    def _authenticate(self, sub: Submission, state: _TriggerState | None, hashes: dict[str, str]) -> str | None:
        """The way in that holds (token in the path, bearer token or HMAC signature), or None. Constant-time throughout
        (hashes of presented tokens are compared; `hashes` keeps a batch from hashing a token
        twice, looked up by the presented token, never by anything stored)."""
        stored = state.row.token_hash if state else None
        by_path = hash_matches(_hashed(sub.path_token, hashes), stored) if sub.path_token is not None else False
        by_bearer = hash_matches(_hashed(sub.bearer, hashes), stored) if sub.bearer is not None else False
        by_hmac = False
        if state and stored and state.definition.webhook.hmac and state.secret and not sub.too_large:
            config = state.definition.webhook.hmac
            header = _header(sub.headers, config.header)
            by_hmac = verify(state.secret, sub.body, header, config)
        if not stored:
            return None  # unknown or never activated: nothing can authenticate
        return "path" if by_path else "bearer" if by_bearer else "hmac" if by_hmac else None

    def _statements(self, db: Driver, batch: list[Submission]) -> list[Verdict]:
        """Authenticate and record a batch inside the caller's transaction."""
        verdicts, pending = self._authorize(db, batch)
        self._dedupe(db, pending, verdicts)
        if pending:
            decided = time.time_ns() // 1000  # one clock read per batch: the answer latency's end
            rows = []
            queued = []
            for _, row in pending:
                row[_DECIDED_AT] = decided
                rows.append(tuple(row))
                if row[_OUTCOME] == "queued":
                    queued.append((row[_ID], row[_AUTOMATION_ID], "queued", row[_RECEIVED_AT], None, None, 0))
            db.insert("deliveries", _DELIVERY_COLUMNS, rows)
            if queued:
                db.insert("run_queue", _QUEUE_COLUMNS, queued)
        return [v or REFUSED for v in verdicts]

    def _authorize(
        self, db: Driver, batch: list[Submission]
    ) -> tuple[list[Verdict | None], list[tuple[int, list[Any]]]]:
        """Authenticate a batch: the verdicts decided already (404, 413, 409) and the rows to record
        (index in the batch, row). A delivery's row is a list in _DELIVERY_COLUMNS order (no dict
        per delivery: the recorder's Python is per delivery, docs/reference-webhooks.md#benchmark)."""
        ids = sorted({s.trigger_id for s in batch})
        found = db.rows(f"SELECT {_TRIGGER_COLUMNS} FROM triggers WHERE id IN ({db.marks(len(ids))})", ids)
        states = {r[0]: self._state(_TriggerRow._make(r)) for r in found}
        hashes: dict[str, str] = {}
        verdicts: list[Verdict | None] = [None] * len(batch)
        pending: list[tuple[int, list[Any]]] = []
        random_hex = secrets.token_hex(5 * len(batch))  # one getrandom() per batch
        for i, sub in enumerate(batch):
            state = states.get(sub.trigger_id)
            method = self._authenticate(sub, state, hashes)
            if method is None or state is None:
                # 413 is decided by size alone, before authentication: it reveals no trigger.
                verdicts[i] = Verdict(413 if sub.too_large else 404)
                continue
            if sub.too_large or not state.row.enabled:
                # Refused after authentication passed: recorded, no payload kept.
                code = 413 if sub.too_large else 409
                detail = "body larger than 1 MiB" if sub.too_large else "trigger is disabled"
                row = _delivery_row(sub, state, method, random_hex[10 * i : 10 * i + 10], refused=(code, detail))
                verdicts[i] = Verdict(code, row[_ID], "refused")
            else:
                row = _delivery_row(sub, state, method, random_hex[10 * i : 10 * i + 10], self.defer_payload)
            pending.append((i, row))
        return verdicts, pending

    def _dedupe(self, db: Driver, pending: list[tuple[int, list[Any]]], verdicts: list[Verdict | None]) -> None:
        """A retry is recorded but never starts a second run (de-duplication), across processes:
        the first delivery of a key in this batch claims it (engine.server.keys); whoever holds it
        is the one every copy names."""
        candidates = sorted(
            ((row[_TRIGGER_ID], row[_DEDUPE_KEY]), i, row) for i, row in pending if row[_OUTCOME] == "queued"
        )
        first: dict[tuple[str, str], str] = {}
        for key, _i, row in candidates:
            first.setdefault(key, row[_ID])
        holders = self._keys.claim(db, first) if first else {}
        for key, i, row in candidates:
            winner = holders[key]
            if winner == row[_ID]:
                verdicts[i] = Verdict(202, row[_ID], "queued")
            else:
                row[_OUTCOME], row[_DUPLICATE_OF], row[_DETAIL] = "retry", winner, "retry of an earlier delivery"
                verdicts[i] = Verdict(202, row[_ID], "retry", winner)


class _TriggerRow(NamedTuple):
    """The columns of `triggers` that ingestion reads (the SELECT list is these names)."""

    id: str
    automation_id: str
    definition: str
    enabled: bool
    token_hash: str | None
    hmac_secret_sealed: str | None


_TRIGGER_COLUMNS = ", ".join(_TriggerRow._fields)
# A delivery's row, in the order _delivery_row builds it (the INSERT names these columns).
_DELIVERY_COLUMNS = DELIVERY_COLUMNS
_ID, _TRIGGER_ID, _AUTOMATION_ID, _RECEIVED_AT = 0, 1, 2, 3
_OUTCOME, _DEDUPE_KEY, _DUPLICATE_OF, _DETAIL, _DECIDED_AT = 5, 7, 8, 12, 14
_QUEUE_COLUMNS = tuple(c.name for c in run_queue.columns)


def _insert_ignore(conn: Connection, table: Any) -> Any:
    return store.insert_ignore(conn, table)


def _hashed(token: str, hashes: dict[str, str]) -> str | None:
    if not token:
        return None
    found = hashes.get(token)
    if found is None:
        found = hashes[token] = token_hash(token)
    return found


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    lower = name.lower()
    for key, value in headers:
        if key.lower() == lower:
            return value
    return None


def _delivery_row(
    sub: Submission,
    state: _TriggerState,
    method: str,
    random_hex: str,
    deferred: bool = False,
    refused: tuple[int, str] | None = None,
) -> list[Any]:
    """The delivery's row in _DELIVERY_COLUMNS order: queued, or refused (code, detail) with no
    payload and no key; decided_at is set once per batch. `deferred`: the payload in its deferred
    form (engine.hooks.payload.stored_payload composes it when the row is stored)."""
    received = sub.received_us
    if refused is not None:
        code, detail = refused
        return [
            delivery_id(received, random_hex), state.row.id, state.row.automation_id, received, code, "refused",
            method, None, None, None, len(sub.body), None, detail, received, None,
        ]  # fmt: skip
    hmac_header = state.definition.webhook.hmac.header if state.definition.webhook.hmac else None
    if deferred:
        payload = deferred_payload(sub.body, sub.headers, sub.query, sub.content_type, hmac_header)
    else:
        payload = COMPACT(build_payload(sub.body, sub.headers, sub.query, sub.content_type, hmac_header))
    return [
        delivery_id(received, random_hex), state.row.id, state.row.automation_id, received, 202, "queued", method,
        dedupe_key(dict(sub.headers), sub.body, received), None, payload, len(sub.body), None, None,
        received, None,
    ]  # fmt: skip
