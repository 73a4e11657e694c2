"""`platform db migrate status|up` (docs/reference-webhooks.md#commands): status opens without migrating; up
applies every pending embedded migration, exits 0 when current and is safe to re-run."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import cli_fork

from engine.serverstore.migrations import embedded, up
from engine.serverstore.store import open_engine
from tests.pg_fixtures import pg_url  # noqa: F401
from tests.webhooks_fixtures import ROOT, isolated_env


def _db(tmp: Path, *args: str, **env: str) -> tuple[int, dict]:
    done = cli_fork.run(
        [sys.executable, "-m", "app.main", "platform", "db", "migrate", *args, "--json"],
        cwd=ROOT,
        env=isolated_env(tmp, **env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, json.loads(done.stdout)


def test_sqlite_status_does_not_migrate_and_up_is_idempotent(tmp_path: Path) -> None:
    """status reports count applied and lists missing without creating or migrating anything;
    up applies them; up again exits 0 (already current); status then reports current."""
    db = tmp_path / "p.db"
    url = f"sqlite:///{db}"
    code, doc = _db(tmp_path, "status", DATABASE_URL=url)
    versions = [m.version for m in embedded()]
    assert code == 0 and doc["applied"] == 0 and [m["version"] for m in doc["missing"]] == versions
    assert not db.exists()
    code, doc = _db(tmp_path, "up", DATABASE_URL=url)
    assert code == 0 and [m["version"] for m in doc["applied_now"]] == versions
    code, doc = _db(tmp_path, "up", DATABASE_URL=url)
    assert code == 0 and doc["applied_now"] == [] and doc["applied"] == len(embedded())
    code, doc = _db(tmp_path, "status", DATABASE_URL=url)
    assert code == 0 and doc["current"] is True and doc["missing"] == []


def test_database_url_is_required_and_driver_checked(tmp_path: Path) -> None:
    """DATABASE_URL is required; DATABASE_DRIVER is optional and must name a known driver."""
    code, doc = _db(tmp_path, "status")
    assert code == 2 and not doc["ok"] and "DATABASE_URL" in doc["error"]["message"]
    code, doc = _db(tmp_path, "up", DATABASE_URL=str(tmp_path / "x.db"), DATABASE_DRIVER="oracle")
    assert code == 2 and "DATABASE_DRIVER" in doc["error"]["message"]
    code, doc = _db(tmp_path, "up", DATABASE_URL=str(tmp_path / "x.db"), DATABASE_DRIVER="sqlite")
    assert code == 0 and len(doc["applied_now"]) == len(embedded())


def test_postgres_status_up_and_concurrent_up(tmp_path: Path, pg_url: str) -> None:
    """On PostgreSQL: status before and after; several `up` at once apply each migration once."""
    code, doc = _db(tmp_path, "status", DATABASE_URL=pg_url, DATABASE_DRIVER="postgres")
    assert code == 0 and doc["applied"] == 0 and doc["current"] is False
    engine = open_engine(pg_url.replace("postgresql://", "postgresql+psycopg://"))
    results: list = []
    errors: list = []

    def migrate() -> None:
        try:
            results.append(up(engine))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=migrate) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    engine.dispose()
    assert errors == []
    assert sum(len(r.applied_now) for r in results) == len(embedded())
    code, doc = _db(tmp_path, "up", DATABASE_URL=pg_url)
    assert code == 0 and doc["applied_now"] == []
    code, doc = _db(tmp_path, "status", DATABASE_URL=pg_url)
    assert code == 0 and doc["current"] is True and doc["applied"] == len(embedded())


def test_unreachable_database_fails_cleanly(tmp_path: Path) -> None:
    """Bad input: a clear error and exit 1, never a traceback."""
    code, doc = _db(tmp_path, "status", DATABASE_URL="postgresql://nobody@127.0.0.1:1/none")
    assert code == 1 and doc["error"]["code"] == "database_error"
