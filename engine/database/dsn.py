"""Connection strings: `--dsn` or `DATABASE_URL` (docs/reference-db.md#commands), loopback checks, redaction."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from engine.database.errors import DatabaseAuthoringError
from engine.errors import UsageError

SCHEMES = ("postgres", "postgresql")


@dataclass(frozen=True)
class Dsn:
    """A PostgreSQL URL. `url` is what psycopg gets (golang-migrate's `x-` parameters removed);
    `migrations_table` is golang-migrate's `x-migrations-table` (default schema_migrations)."""

    url: str
    migrations_table: str = "schema_migrations"

    @property
    def parts(self) -> Any:
        return urlsplit(self.url)

    @property
    def host(self) -> str:
        parts = self.parts
        host = parts.hostname or dict(parse_qsl(parts.query)).get("host") or "localhost"
        return unquote(host)

    @property
    def database(self) -> str:
        path = self.parts.path.lstrip("/")
        return unquote(path) or dict(parse_qsl(self.parts.query)).get("dbname", "")

    @property
    def port(self) -> int:
        return self.parts.port or 5432

    @property
    def redacted(self) -> str:
        """For messages and --json: the password never appears (Standards: secrets never echoed)."""
        parts = self.parts
        if parts.password is None:
            return self.url
        netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit(parts._replace(netloc=netloc))

    @property
    def is_loopback(self) -> bool:
        host = self.host
        if host.startswith("/") or host in ("localhost", ""):
            return True  # a Unix socket directory or the local name
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def same_database(self, other: Dsn) -> bool:
        """Same host, port and database name (user and password may differ)."""
        def norm(h: str) -> str:
            return "127.0.0.1" if h in ("localhost", "::1", "") else h
        return (norm(self.host), self.port, self.database) == (norm(other.host), other.port, other.database)

    def with_database(self, name: str) -> Dsn:
        return Dsn(urlunsplit(self.parts._replace(path="/" + name)), self.migrations_table)


def parse(url: str) -> Dsn:
    url = url.strip()
    scheme = url.partition("://")[0].lower()
    if scheme not in SCHEMES:
        raise UsageError("the connection string is not a postgresql:// URL",
                         hint="e.g. --dsn postgresql://user@127.0.0.1:5432/app")
    parts = urlsplit(url)
    params = parse_qsl(parts.query)
    table = dict(params).get("x-migrations-table") or "schema_migrations"
    if dict(params).get("x-migrations-table-quoted", "").lower() in ("1", "true"):
        raise UsageError("x-migrations-table-quoted is not supported", hint="name the table without a schema")
    query = [(k, v) for k, v in params if not k.startswith("x-")]
    return Dsn(urlunsplit(parts._replace(scheme="postgresql", query=urlencode(query))), table)


def resolve(dsn: str | None, *, required: bool = True) -> Dsn | None:
    """`--dsn` first, then `DATABASE_URL` (the connection rule of every `db` command)."""
    value = dsn if dsn else os.environ.get("DATABASE_URL", "")
    if not value.strip():
        if not required:
            return None
        raise UsageError("no database: pass --dsn or set DATABASE_URL",
                         hint="e.g. DATABASE_URL=postgresql://user@127.0.0.1:5432/app framework db migrate status")
    return parse(value)


def connect(dsn: Dsn, *, autocommit: bool = True) -> Any:
    import psycopg

    try:
        return psycopg.connect(dsn.url, autocommit=autocommit, connect_timeout=10)
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseAuthoringError(f"cannot connect to {dsn.redacted}: {first}") from exc
