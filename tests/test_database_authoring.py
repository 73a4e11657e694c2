"""`framework db migration new|rebase` (docs/reference-db.md#commands: 14-digit UTC timestamp versions; a migration
already on the default branch is refused)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from engine.database.authoring import new_migration
from engine.database.dsn import parse
from engine.database.files import is_timestamp, load, next_versions
from tests.database_fixtures import fw, write
from tests.pg_fixtures import pg_url  # noqa: F401


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "db" / "migrations").mkdir(parents=True)
    (root / "framework.yaml").write_text("name: proj\n")
    return root


def test_new_allocates_a_utc_timestamp_after_every_version_also_when_the_clock_is_behind(tmp_path: Path) -> None:
    """Limits: 14-digit UTC timestamp; db migration new sorts after every existing version, also
    one from the future (then one second after it, still a valid timestamp)."""
    root = _project(tmp_path)
    d = write(root / "db" / "migrations", {"1_legacy.up.sql": "SELECT 1;\n",
                                           "29991231235959_future.up.sql": "SELECT 1;\n"})
    code, doc, _ = fw("db", "migration", "new", "Add Users!", cwd=root)
    assert code == 0 and doc["version"] == 30000101000000 and is_timestamp(doc["version"])
    assert Path(doc["file"]).name == "30000101000000_add_users.up.sql"
    assert load(d).versions[-1] == 30000101000000
    assert next_versions([], 1, datetime(2025, 1, 7, 10, 16, 30, tzinfo=UTC)) == [20250107101630]


def test_new_scaffolds_schema_context_from_the_database(tmp_path: Path, pg_url: str) -> None:
    """db migration new --dsn: the .up.sql carries the live schema as comments, and its version
    sorts after the database's version too."""
    root = _project(tmp_path)
    d = root / "db" / "migrations"
    write(d, {"20240101000000_users.up.sql": "CREATE TABLE users (id bigint PRIMARY KEY, email text NOT NULL);\n"
              "CREATE TABLE posts (id bigint PRIMARY KEY, user_id bigint REFERENCES users(id));\n"})
    code, _, _ = fw("db", "migrate", "up", "--dsn", pg_url, cwd=root)
    assert code == 0
    made = new_migration("add_tags", d, parse(pg_url), now=datetime(2020, 1, 1, tzinfo=UTC))
    text = Path(made.file).read_text()
    assert made.version == 20240101000001 and made.context == "database"
    assert "--     users(id bigint PK, email text NOT NULL)" in text
    assert "posts(id bigint PK, user_id bigint -> users.id)" in text
    assert "at version 20240101000000" in text
    assert all(line.startswith("--") for line in text.strip().splitlines())


def test_new_refuses_a_name_without_letters(tmp_path: Path) -> None:
    """Bad input: a clear error and exit 2, no file written."""
    root = _project(tmp_path)
    code, doc, _ = fw("db", "migration", "new", "!!!", cwd=root)
    assert code == 2 and doc["error"]["code"] == "usage"
    assert list((root / "db" / "migrations").iterdir()) == []


def _repo_with_branch(tmp_path: Path) -> Path:
    root = _project(tmp_path)
    d = root / "db" / "migrations"
    write(d, {"20240101000000_a.up.sql": "SELECT 1;\n", "20240301000000_c.up.sql": "SELECT 3;\n"})
    _git(root, "init", "-q", "-b", "main")
    _git(root, "-c", "user.email=t@t", "-c", "user.name=t", "add", "-A")
    _git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "main")
    _git(root, "checkout", "-q", "-b", "feature")
    write(d, {"20240201000000_b.up.sql": "SELECT 2;\n", "20250101000000_late.up.sql": "SELECT 4;\n"})
    _git(root, "add", "-A")
    _git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "feature")
    return root


def test_rebase_all_pending_moves_files_below_the_current_version_with_git_mv(tmp_path: Path) -> None:
    """db migration rebase --all-pending: a branch file whose version is below the default branch's
    newest is re-versioned after it with `git mv`; a file already after it stays."""
    root = _repo_with_branch(tmp_path)
    code, doc, _ = fw("db", "migration", "rebase", "--all-pending", cwd=root)
    assert code == 0, doc
    assert doc["base"] == "main" and doc["current_version"] == 20240301000000
    assert [(m["old"], m["git"]) for m in doc["moves"]] == [("20240201000000_b.up.sql", True)]
    new = doc["moves"][0]["new"]
    assert int(new.split("_")[0]) > 20250101000000 and is_timestamp(int(new.split("_")[0]))
    assert doc["unchanged"] == ["20250101000000_late.up.sql"]
    status = _git(root, "status", "--porcelain")
    assert f"R  db/migrations/20240201000000_b.up.sql -> db/migrations/{new}" in status


def test_rebase_refuses_a_migration_on_the_default_branch(tmp_path: Path) -> None:
    """`db migration rebase` (docs/reference-db.md#commands) is refused for a migration already on the
    default branch."""
    root = _repo_with_branch(tmp_path)
    code, doc, err = fw("db", "migration", "rebase", "db/migrations/20240101000000_a.up.sql", cwd=root)
    assert code == 1 and doc["error"]["code"] == "refused" and "already on the default branch (main)" in err
    assert (root / "db" / "migrations" / "20240101000000_a.up.sql").exists()


def test_rebase_uses_the_database_version_with_dsn(tmp_path: Path, pg_url: str) -> None:
    """db migration rebase <path> --dsn: the schema's current version is the database's."""
    root = _repo_with_branch(tmp_path)
    code, _, _ = fw("db", "migrate", "force", "20250101000000", "--dsn", pg_url, cwd=root)
    assert code == 0
    code, doc, _ = fw("db", "migration", "rebase", "db/migrations/20240201000000_b.up.sql", "--dsn", pg_url, cwd=root)
    assert code == 0 and doc["current_from"] == "database" and doc["current_version"] == 20250101000000
    assert int(doc["moves"][0]["new"].split("_")[0]) > 20250101000000
    code, doc, _ = fw("db", "migration", "rebase", cwd=root)
    assert code == 2 and doc["error"]["code"] == "usage"
