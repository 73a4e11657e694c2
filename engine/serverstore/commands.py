"""`platform db migrate status|up` against DATABASE_URL (required) and DATABASE_DRIVER (optional)."""

from __future__ import annotations

from pathlib import Path

from engine.progress import Reporter
from engine.serverstore.migrations import MigrationResult, MigrationStatus, embedded, status, up
from engine.serverstore.store import open_engine
from engine.serverstore.url import url_from_env


def migrate_status() -> MigrationStatus:
    url = url_from_env(required=True)
    assert url is not None
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        if not path.exists():
            # Opening would create the file: a database that does not exist has nothing applied.
            emb = embedded()
            return MigrationStatus(
                database=url, applied=0, embedded=len(emb), missing=emb, unknown=[], current=not emb
            )
    engine = open_engine(url, pool_size=1, connect_timeout=5)
    try:
        return status(engine)
    finally:
        engine.dispose()


def migrate_up(report: Reporter | None = None) -> MigrationResult:
    url = url_from_env(required=True)
    assert url is not None
    engine = open_engine(url, pool_size=1, connect_timeout=5)
    try:
        return up(engine, report)
    finally:
        engine.dispose()
