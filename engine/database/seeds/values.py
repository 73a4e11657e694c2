"""Column values of synthesized rows: a pure function of (table, column, ordinal, vocab, anchor),
so the same input gives the same rows, byte for byte."""

from __future__ import annotations

import re
import uuid
import zlib
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from engine.database.seeds.vocab import ColumnVocab

Generator = Callable[[int], Any]
NAMESPACE = uuid.UUID("6f1c3a52-4a43-4d4c-9a57-2c7f1e0b9d11")
POOL = 500
# Text columns named like these draw from a Faker pool (seeded per column: deterministic).
NAME_HINTS = {
    "email": "email", "first_name": "first_name", "last_name": "last_name", "name": "name",
    "full_name": "name", "username": "user_name", "user_name": "user_name", "city": "city",
    "country": "country", "phone": "phone_number", "company": "company", "url": "url", "title": "sentence",
    "description": "sentence", "address": "street_address", "street": "street_address",
}
INT_TYPES = {"smallint", "integer", "bigint"}
_FAKER: Any = None


class Unsupported(Exception):
    pass


def _faker() -> Any:
    global _FAKER
    if _FAKER is None:
        from faker import Faker

        _FAKER = Faker("en_US")
    return _FAKER


def faker_pool(provider: str, seed: int) -> list[str] | None:
    fake = _faker()
    method = getattr(fake, provider, None)
    if provider.startswith("_") or not callable(method):
        return None
    fake.seed_instance(seed)
    return [str(method()) for _ in range(POOL)]


def _seed(table: str, column: str) -> int:
    return zlib.crc32(f"{table}.{column}".encode())


def _length(typ: str) -> int | None:
    m = re.match(r"^(character varying|varchar|character|char)\((\d+)\)$", typ)
    return int(m[2]) if m else None


def base_type(typ: str) -> str:
    return re.sub(r"\(.*\)", "", typ).strip()


def coerce(value: Any, typ: str, enum_labels: list[str] | None) -> Any:
    """A vocab value as the column's type; ValueError when it does not fit."""
    base = base_type(typ)
    if enum_labels is not None:
        if str(value) not in enum_labels:
            raise ValueError(f"not one of the enum's labels {enum_labels}")
        return str(value)
    if base in INT_TYPES:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"not an integer for a {typ} column")
        return value
    if base in ("numeric", "real", "double precision", "decimal"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"not a number for a {typ} column")
        return Decimal(str(value))
    if base == "boolean":
        if not isinstance(value, bool):
            raise ValueError("not true or false for a boolean column")
        return value
    if base == "uuid":
        return uuid.UUID(str(value))
    if base == "date":
        return value if isinstance(value, date) else date.fromisoformat(str(value))
    if base.startswith("timestamp"):
        return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    if isinstance(value, dict | list):
        raise ValueError(f"not a scalar for a {typ} column")
    text = str(value)
    limit = _length(typ)
    if limit is not None and len(text) > limit:
        raise ValueError(f"longer than {limit} characters")
    return text


def _unique_text(value: str, i: int, limit: int | None) -> str:
    if "@" in value:
        local, _, domain = value.partition("@")
        value = f"{local}+{i + 1}@{domain}"
    else:
        value = f"{value} {i + 1}"
    return value[-limit:] if limit else value


def generator(table: str, column: str, typ: str, *, unique: bool, enum_labels: list[str] | None,
              vocab: ColumnVocab | None, valid_values: list[Any] | None, anchor: datetime) -> Generator:
    """The value of `column` for row ordinal i."""
    h = _seed(table, column)
    base = base_type(typ)
    limit = _length(typ)
    if valid_values:
        values = valid_values
        if unique and base not in INT_TYPES and all(isinstance(v, str) for v in values):
            return lambda i: values[i % len(values)] if i < len(values) else _unique_text(values[i % len(values)],
                                                                                          i, limit)
        return lambda i: values[i % len(values)]
    if enum_labels:
        return lambda i: enum_labels[(i + h) % len(enum_labels)]
    if base.startswith("timestamp") or base == "date":
        start = vocab.start if vocab and vocab.start is not None else timedelta(days=-30)
        end = vocab.end if vocab and vocab.end is not None else timedelta(0)
        if vocab and vocab.offset is not None:
            start = end = vocab.offset
        span = max(0, int((end - start).total_seconds()))
        aware = "with time zone" in typ or base == "timestamptz"

        def moment(i: int) -> Any:
            at = anchor + start + timedelta(seconds=(h + i * 7919) % (span + 1))
            if base == "date":
                return at.date()
            return at if aware else at.replace(tzinfo=None)
        return moment
    if base in INT_TYPES:
        if unique:
            return lambda i: i + 1
        return lambda i: (h + i * 7919) % 1000
    if base in ("numeric", "real", "double precision", "decimal"):
        return lambda i: Decimal((h + i * 7919) % 100000) / 100
    if base == "boolean":
        return lambda i: (h + i) % 2 == 0
    if base == "uuid":
        return lambda i: uuid.uuid5(NAMESPACE, f"{table}.{column}.{i}")
    if base in ("json", "jsonb"):
        from psycopg.types.json import Json, Jsonb

        wrap = Jsonb if base == "jsonb" else Json
        return lambda i: wrap({"seed": i + 1})
    if base == "bytea":
        return lambda i: f"{table}.{column}.{i}".encode()
    if base in ("time without time zone", "time"):
        return lambda i: time((h + i) % 24, (i * 7) % 60)
    if base == "interval":
        return lambda i: timedelta(minutes=(h + i) % 1440)
    if base == "inet":
        return lambda i: f"10.{(i >> 16) % 256}.{(i >> 8) % 256}.{i % 256}"
    if typ.endswith("[]"):
        return lambda i: []
    if base in ("text", "character varying", "varchar", "character", "char", "citext"):
        provider = vocab.faker if vocab and vocab.faker else NAME_HINTS.get(column)
        pool = faker_pool(provider, h) if provider else None
        if pool:
            if unique:
                return lambda i: _unique_text(pool[(i * 7919) % POOL], i, limit)
            return lambda i: pool[(i * 7919) % POOL][:limit] if limit else pool[(i * 7919) % POOL]
        label = column.replace("_", " ")
        return lambda i: (f"{label} {i + 1}"[-limit:] if limit else f"{label} {i + 1}")
    raise Unsupported(typ)


def today_anchor() -> datetime:
    """Relative timestamps are relative to today's UTC midnight: same input, same day, same rows."""
    now = datetime.now(UTC)
    return datetime(now.year, now.month, now.day, tzinfo=UTC)
