"""Helpers of the database-authoring tests: the real golang-migrate and goose binaries (installed
by `make test` into .tools/bin), migration files, the `framework` CLI with --json, pg_locks waits."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.conftest import REPO, run_cli

TOOLS = REPO / ".tools" / "bin"


def tool(name: str) -> str:
    """A Go tool the tests drive for real; `make test` installs it (never skipped)."""
    local = TOOLS / name
    if local.is_file():
        return str(local)
    found = shutil.which(name)
    if not found:
        pytest.fail(f"{name} is missing: `make go-tools` (a dependency of `make test`) installs it into .tools/bin")
    return found


def golang_migrate(directory: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool("migrate"), "-path", str(directory), "-database", _pg_url(url), *args],
                          capture_output=True, text=True, timeout=120, check=False)


def _pg_url(url: str) -> str:
    return url + ("&" if "?" in url else "?") + "sslmode=disable"


def write(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory


def fw(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    """`framework <args> --json`: exit code, the JSON document, stderr."""
    res = run_cli("framework", *args, "--json", cwd=cwd, env=env)
    try:
        doc = json.loads(res.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"not one JSON document (exit {res.exit_code}):\n{res.stdout}\n{res.stderr}") from None
    return res.exit_code, doc, res.stderr


def query(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql, params or None)
        return cur.fetchall() if cur.description is not None else []


def advisory_waiters(url: str, key: int) -> int:
    """Sessions waiting (not granted) on the advisory lock `key` (bigint form: classid<<32 | objid)."""
    rows = query(url, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                      "AND ((classid::bigint << 32) | objid::bigint) = %s", key)
    return int(rows[0][0])


def env_without_database_url() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}


def without_demo_database(root: Path) -> Path:
    """A demo copy without the demo's own db/ (migrations, seeds): the test brings its schema."""
    shutil.rmtree(root / "db", ignore_errors=True)
    return root
