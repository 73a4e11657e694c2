"""`DATABASE_URL` / `DATABASE_DRIVER` (docs/reference-webhooks.md#environment-variables) to a SQLAlchemy URL."""

from __future__ import annotations

import os
from pathlib import Path

from engine.errors import EngineError

POSTGRES_DRIVERS = {"postgres", "postgresql", "psycopg", "pgx", "pg"}
SQLITE_DRIVERS = {"sqlite", "sqlite3"}


class DatabaseError(EngineError):
    """The database cannot be opened, read or written."""

    code = "database_error"


def sqlalchemy_url(url: str, driver: str | None = None) -> str:
    """Normalise a database URL; `driver` (DATABASE_DRIVER) overrides what the scheme implies."""
    url = url.strip()
    if not url:
        raise EngineError(
            "DATABASE_URL is empty",
            code="usage",
            exit_code=2,
            hint="set DATABASE_URL=postgresql://user@host/db or sqlite:///path/to/file.db",
        )
    kind = (driver or "").strip().lower()
    if kind and kind not in POSTGRES_DRIVERS | SQLITE_DRIVERS:
        raise EngineError(
            f"unknown DATABASE_DRIVER {driver!r}", code="usage", exit_code=2, hint="use postgres or sqlite"
        )
    scheme, sep, rest = url.partition("://")
    if not sep:
        # A bare path is a SQLite file (DATABASE_DRIVER=sqlite or no driver at all).
        if kind in POSTGRES_DRIVERS:
            raise EngineError(f"DATABASE_URL {url!r} is not a postgresql:// URL", code="usage", exit_code=2)
        return "sqlite:///" + os.path.abspath(url)
    base = scheme.split("+", 1)[0].lower()
    if kind in SQLITE_DRIVERS or (not kind and base in ("sqlite", "sqlite3", "file")):
        if base not in ("sqlite", "sqlite3", "file"):
            raise EngineError(
                f"DATABASE_URL scheme {scheme!r} does not match DATABASE_DRIVER={driver}",
                code="usage",
                exit_code=2,
            )
        return "sqlite://" + rest if base != "file" else "sqlite:///" + os.path.abspath(rest)
    if base in ("postgres", "postgresql"):
        return "postgresql+psycopg://" + rest
    raise EngineError(
        f"unsupported DATABASE_URL scheme {scheme!r}",
        code="usage",
        exit_code=2,
        hint="use postgresql://... or sqlite:///...",
    )


def url_from_env(required: bool = True) -> str | None:
    """The database named by the environment, or None when unset and not required."""
    url = os.environ.get("DATABASE_URL")
    if not url:
        if required:
            raise EngineError(
                "DATABASE_URL is not set",
                code="usage",
                exit_code=2,
                hint="export DATABASE_URL=postgresql://user@host/db (or sqlite:///file.db)",
            )
        return None
    return sqlalchemy_url(url, os.environ.get("DATABASE_DRIVER"))


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    creds, _, host = rest.rpartition("@")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in creds else url


DB_FILE = "platform.db"


def default_data_dir() -> Path:
    """The server's data directory: $PLATFORM_DATA_DIR, else ~/.platform/server."""
    env = os.environ.get("PLATFORM_DATA_DIR")
    return Path(env) if env else Path.home() / ".platform" / "server"


def database_url(data_dir: Path) -> str:
    """The store: DATABASE_URL when set, else SQLite in the data directory."""
    return url_from_env(required=False) or f"sqlite:///{(data_dir / DB_FILE).resolve()}"

