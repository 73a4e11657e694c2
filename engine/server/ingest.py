"""Webhook ingestion's durable half (docs/reference-webhooks.md#endpoints: ways in, de-duplication, answers).

`BatchRecorder.record` authenticates a whole batch of submissions against the current trigger
rows and records every delivery, its de-duplication key and its queued run in ONE transaction
(group commit: one durable commit for many deliveries). It runs in the server's recorder process
(engine/server/recorder.py); a request is answered only after that commit, so every 202 is in
history.
"""

from __future__ import annotations

import json
import logging
import operator
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from engine.auth.bearer import hash_matches, token_hash
from engine.hooks.models import TriggerDefinition, delivery_id
from engine.hooks.payload import build_payload, dedupe_key
from engine.hooks.secrets import SecretBox
from engine.hooks.signature import verify
from engine.server.keys import Driver, Keys, keys_for
from engine.serverstore import store
from engine.serverstore.store import deliveries, run_queue

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

    def __init__(self, engine: Engine, box: SecretBox) -> None:
        self.engine = engine
        self.box = box
        self._parsed: dict[tuple[str, str, str | None], tuple[TriggerDefinition, bytes | None]] = {}
        self._conn: Connection | None = None
        self._db: Driver | None = None
        self._keys: Keys = keys_for(engine.dialect.name)

    def record(self, batch: list[Submission]) -> list[Verdict]:
        """The verdict of each submission, in order; all 503 when the batch could not be
        recorded (nothing of it is kept: its transaction is rolled back)."""
        try:
            db = self._driver()
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
        ids = sorted({s.trigger_id for s in batch})
        found = db.rows(f"SELECT {_TRIGGER_COLUMNS} FROM triggers WHERE id IN ({db.marks(len(ids))})", ids)
        states = {r[0]: self._state(_TriggerRow._make(r)) for r in found}
        hashes: dict[str, str] = {}
        verdicts: list[Verdict | None] = [None] * len(batch)
        pending: list[tuple[int, dict[str, Any]]] = []
        random_hex = secrets.token_hex(5 * len(batch))  # one getrandom() per batch
        for i, sub in enumerate(batch):
            state = states.get(sub.trigger_id)
            method = self._authenticate(sub, state, hashes)
            if method is None or state is None:
                # 413 is decided by size alone, before authentication: it reveals no trigger.
                verdicts[i] = Verdict(413 if sub.too_large else 404)
                continue
            delivery = _delivery_row(sub, state, method, random_hex[10 * i : 10 * i + 10])
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
        self._dedupe(db, pending, verdicts)
        if pending:
            decided = time.time_ns() // 1000  # one clock read per batch: the answer latency's end
            for _, d in pending:
                d["decided_at"] = decided
            db.insert("deliveries", _DELIVERY_COLUMNS, [_DELIVERY_VALUES(d) for _, d in pending])
            queued = [
                (d["id"], d["automation_id"], "queued", d["received_at"], None, None, 0)
                for _, d in pending
                if d["outcome"] == "queued"
            ]
            if queued:
                db.insert("run_queue", _QUEUE_COLUMNS, queued)
        return [v or REFUSED for v in verdicts]

    def _dedupe(
        self, db: Driver, pending: list[tuple[int, dict[str, Any]]], verdicts: list[Verdict | None]
    ) -> None:
        """A retry is recorded but never starts a second run (de-duplication), across processes:
        the first delivery of a key in this batch claims it (engine.server.keys); whoever holds it
        is the one every copy names."""
        candidates = sorted(
            ((d["trigger_id"], d["dedupe_key"]), i, d) for i, d in pending if d["outcome"] == "queued"
        )
        first: dict[tuple[str, str], str] = {}
        for key, _i, d in candidates:
            first.setdefault(key, d["id"])
        holders = self._keys.claim(db, first) if first else {}
        for key, i, d in candidates:
            winner = holders[key]
            if winner == d["id"]:
                verdicts[i] = Verdict(202, d["id"], "queued")
            else:
                d.update(outcome="retry", duplicate_of=winner, detail="retry of an earlier delivery")
                verdicts[i] = Verdict(202, d["id"], "retry", winner)


class _TriggerRow(NamedTuple):
    """The columns of `triggers` that ingestion reads (the SELECT list is these names)."""

    id: str
    automation_id: str
    definition: str
    enabled: bool
    token_hash: str | None
    hmac_secret_sealed: str | None


_TRIGGER_COLUMNS = ", ".join(_TriggerRow._fields)
_DELIVERY_COLUMNS = tuple(c.name for c in deliveries.columns)
_DELIVERY_VALUES = operator.itemgetter(*_DELIVERY_COLUMNS)
_QUEUE_COLUMNS = tuple(c.name for c in run_queue.columns)


def _insert_ignore(conn: Connection, table: Any) -> Any:
    return store.insert_ignore(conn, table)


def _compact_encoder() -> Callable[[Any], str]:
    """json.dumps(obj, separators=(",", ":")), byte for byte, with the C encoder built once:
    JSONEncoder.encode builds one per call, with a dict of the containers it entered to refuse a
    circular one (~3 us of the recorder's ~45 per delivery). A payload is json.loads' output in
    fresh dicts, so it holds no cycle (tests/test_webhooks_ingest.py compares the two). Any
    interpreter whose C encoder is missing or differs (checked on a sample) gets JSONEncoder's."""
    slow = json.JSONEncoder(separators=(",", ":")).encode
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return slow

    def default(obj: Any) -> Any:
        raise TypeError(f"Object of type {obj.__class__.__name__} is not JSON serializable")

    try:
        encode = make(None, default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
        sample = {"body": {"a": [1, 2.5, None, True, "\u00e9\n"]}, "headers": {}, "query": {"k": ["1"]}}
        if "".join(encode(sample, 0)) != slow(sample):
            return slow
    except TypeError:  # another signature
        return slow
    return lambda obj: "".join(encode(obj, 0))


_COMPACT = _compact_encoder()


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


def _delivery_row(sub: Submission, state: _TriggerState, method: str, random_hex: str) -> dict[str, Any]:
    hmac_header = state.definition.webhook.hmac.header if state.definition.webhook.hmac else None
    payload = build_payload(sub.body, sub.headers, sub.query, sub.content_type, hmac_header)
    return {
        "id": delivery_id(sub.received_us, random_hex),
        "trigger_id": state.row.id,
        "automation_id": state.row.automation_id,
        "received_at": sub.received_us,
        "status_code": 202,
        "outcome": "queued",
        "auth_method": method,
        "dedupe_key": dedupe_key(dict(sub.headers), sub.body, sub.received_us),
        "duplicate_of": None,
        "payload": _COMPACT(payload),
        "body_bytes": len(sub.body),
        "run_id": None,
        "detail": None,
        "updated_at": sub.received_us,
        "decided_at": None,
    }
