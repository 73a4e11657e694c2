"""`framework db migrate up|status|version|force` against real PostgreSQL and the real golang-migrate
(docs/reference-db.md#migrations-golang-migrate-compatible: `up` refuses a dirty version until `force`; sequential
versions stay valid and sort before timestamps)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import cli_fork

from engine.database.dsn import parse
from engine.database.runner import Runner, lock_id
from tests.conftest import BIN
from tests.database_fixtures import advisory_waiters, fw, golang_migrate, query, write
from tests.pg_fixtures import pg_url  # noqa: F401
from tests.waiting import until

LEGACY_AND_TIMESTAMPS = {
    "1_init.up.sql": "CREATE TABLE accounts (id bigint PRIMARY KEY);\n",
    "2_names.up.sql": "ALTER TABLE accounts ADD COLUMN name text;\n",
    "20240101000000_orders.up.sql": "CREATE TABLE orders (id bigint PRIMARY KEY,\n"
                                    "  account_id bigint REFERENCES accounts(id));\n",
    "20240102000000_notes.up.sql": "-- a comment; with a semicolon\nCREATE TABLE notes (body text);\n"
                                   "INSERT INTO notes VALUES ('50% done; really');\n",
}


def test_round_trip_with_golang_migrate_and_legacy_versions_sort_first(tmp_path: Path, pg_url: str) -> None:
    """Sequential versions stay valid and sort before timestamps, and the golang-migrate compatibility
    (docs/reference-db.md#migrations-golang-migrate-compatible): golang-migrate applies the sequential
    files, we apply the timestamped ones on the same database, golang-migrate continues after us,
    and both read the same version."""
    d = write(tmp_path / "m", LEGACY_AND_TIMESTAMPS)
    out = golang_migrate(d, pg_url, "up", "2")
    assert out.returncode == 0, out.stderr
    code, doc, _ = fw("db", "migrate", "status", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 0 and doc["version"] == 2 and not doc["dirty"]
    assert [p["version"] for p in doc["pending"]] == [20240101000000, 20240102000000]
    code, doc, _ = fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 0, doc
    assert [a["version"] for a in doc["applied_now"]] == [20240101000000, 20240102000000]
    assert query(pg_url, "SELECT version, dirty FROM schema_migrations") == [(20240102000000, False)]
    assert query(pg_url, "SELECT body FROM notes") == [("50% done; really",)]
    assert golang_migrate(d, pg_url, "version").stderr.strip() == "20240102000000"
    write(d, {"20240103000000_more.up.sql": "ALTER TABLE notes ADD COLUMN at timestamptz;\n"})
    out = golang_migrate(d, pg_url, "up")
    assert out.returncode == 0, out.stderr
    code, doc, _ = fw("db", "migrate", "version", "--dsn", pg_url, cwd=tmp_path)
    assert code == 0 and doc["version"] == 20240103000000 and doc["dirty"] is False
    code, doc, _ = fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 0 and doc["applied_now"] == []


def test_status_opens_without_migrating(tmp_path: Path, pg_url: str) -> None:
    """db migrate status reads only: on a fresh database it creates no schema_migrations table."""
    d = write(tmp_path / "m", LEGACY_AND_TIMESTAMPS)
    code, doc, _ = fw("db", "migrate", "status", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 0 and doc["version"] is None and doc["applied"] == 0 and len(doc["pending"]) == 4
    assert query(pg_url, "SELECT count(*) FROM pg_tables WHERE tablename = 'schema_migrations'") == [(0,)]


def test_database_url_is_the_default_connection(tmp_path: Path, pg_url: str) -> None:
    """db migrate: connection via --dsn or env DATABASE_URL; neither is a usage error (exit 2)."""
    d = write(tmp_path / "m", LEGACY_AND_TIMESTAMPS)
    code, doc, _ = fw("db", "migrate", "up", "--dir", str(d), cwd=tmp_path, env={"DATABASE_URL": pg_url})
    assert code == 0 and len(doc["applied_now"]) == 4
    code, doc, err = fw("db", "migrate", "up", "--dir", str(d), cwd=tmp_path, env={"DATABASE_URL": ""})
    assert code == 2 and doc["error"]["code"] == "usage" and "DATABASE_URL" in err


def test_lock_id_is_golang_migrates(tmp_path: Path, pg_url: str) -> None:
    """The advisory lock is golang-migrate's: while we hold ours, its `up` waits on the same key."""
    d = write(tmp_path / "m", LEGACY_AND_TIMESTAMPS)
    dsn = parse(pg_url)
    with Runner(dsn) as holder:
        assert holder.lock_id == lock_id("/" + holder.database, "public")
        holder.lock()
        proc = subprocess.Popen([*golang_migrate_cmd(d, pg_url), "up"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            until(lambda: advisory_waiters(pg_url, holder.lock_id) == 1, what="golang-migrate waiting on our lock")
            assert query(pg_url, "SELECT count(*) FROM pg_tables WHERE tablename = 'accounts'") == [(0,)]
        finally:
            holder.unlock()
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert query(pg_url, "SELECT version FROM schema_migrations") == [(20240102000000,)]


def golang_migrate_cmd(directory: Path, url: str) -> list[str]:
    from tests.database_fixtures import _pg_url, tool

    return [tool("migrate"), "-path", str(directory), "-database", _pg_url(url)]


def test_two_concurrent_ups_apply_each_migration_once(tmp_path: Path, pg_url: str) -> None:
    """Two `up`s at once apply each migration once (advisory lock:
    docs/reference-db.md#migrations-golang-migrate-compatible). Both are held at the lock until both wait on
    it, then released together."""
    d = write(tmp_path / "m", {
        "20240101000000_t.up.sql": "CREATE TABLE t (n int);\n",
        "20240101000001_once.up.sql": "INSERT INTO t VALUES (1);\n",
    })
    dsn = parse(pg_url)
    with Runner(dsn) as holder:
        holder.lock()
        procs = [cli_fork.popen([str(BIN / "framework"), "db", "migrate", "up", "--dsn", pg_url, "--dir", str(d),
                                   "--json"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        try:
            until(lambda: advisory_waiters(pg_url, holder.lock_id) == 2, what="both ups waiting on the lock")
        finally:
            holder.unlock()
        results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    import json

    applied = sorted(len(json.loads(out)["applied_now"]) for out, _ in results)
    assert applied == [0, 2]
    assert query(pg_url, "SELECT count(*) FROM t") == [(1,)]


def test_bad_sql_marks_dirty_reports_file_line_and_both_force_commands(tmp_path: Path, pg_url: str) -> None:
    """Dirty rule (docs/reference-db.md#migrations-golang-migrate-compatible): a failing file leaves the
    version dirty exactly as golang-migrate does, and says more than "Dirty database version N": file:line,
    the statement, the database's error, the force command for each case; `up` (ours and golang-migrate's)
    then refuses until forced."""
    d = write(tmp_path / "m", {
        "20240101000000_a.up.sql": "CREATE TABLE a (id int);\n",
        "20240102000000_b.up.sql": "CREATE TABLE b (id int);\n\n-- the typo is on line 4\n"
                                   "ALTER TABLE b ADD COLUMNN x int;\n",
    })
    code, doc, err = fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 1
    e = doc["error"]
    assert e["code"] == "migration_failed" and e["line"] == 4 and e["file"].endswith("20240102000000_b.up.sql")
    assert "ADD COLUMNN" in e["statement"] and e["sqlstate"] == "42601" and "syntax error" in e["db_error"]
    assert e["applied"] == "none"
    assert e["force_commands"] == {"not_applied": "framework db migrate force 20240101000000",
                                   "applied": "framework db migrate force 20240102000000"}
    assert "20240102000000_b.up.sql:4" in err
    # nothing of the failed file was applied (its own transaction) but the version is dirty
    assert query(pg_url, "SELECT count(*) FROM pg_tables WHERE tablename = 'b'") == [(0,)]
    assert query(pg_url, "SELECT version, dirty FROM schema_migrations") == [(20240102000000, True)]
    assert "dirty" in golang_migrate(d, pg_url, "version").stderr
    assert "Dirty database version 20240102000000" in golang_migrate(d, pg_url, "up").stderr
    code, doc, err = fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 1 and doc["error"]["code"] == "dirty" and "framework db migrate force" in err
    assert doc["error"]["force_commands"]["not_applied"] == "framework db migrate force 20240101000000"
    # repair: fix the file, force the previous version, up again
    write(d, {"20240102000000_b.up.sql": "CREATE TABLE b (id int);\nALTER TABLE b ADD COLUMN x int;\n"})
    code, doc, _ = fw("db", "migrate", "force", "20240101000000", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 0 and doc["version"] == 20240101000000 and doc["dirty"] is False
    code, doc, _ = fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 0 and [a["version"] for a in doc["applied_now"]] == [20240102000000]


def test_dirty_left_by_golang_migrate_is_refused_with_force_none_for_the_first(tmp_path: Path, pg_url: str) -> None:
    """Dirty rule across tools (docs/reference-db.md#migrations-golang-migrate-compatible): golang-migrate
    fails the first migration; our `up` refuses and names `force none` (nothing before it) or `force <version>`."""
    d = write(tmp_path / "m", {"20240101000000_a.up.sql": "CREATE TABLE a (id int);\nSELECT 1/0;\n"})
    assert golang_migrate(d, pg_url, "up").returncode != 0
    code, doc, _ = fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 1 and doc["error"]["code"] == "dirty" and doc["error"]["version"] == 20240101000000
    assert doc["error"]["force_commands"] == {"not_applied": "framework db migrate force none",
                                              "applied": "framework db migrate force 20240101000000"}
    code, doc, _ = fw("db", "migrate", "force", "none", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 0 and doc["version"] is None
    assert golang_migrate(d, pg_url, "version").stderr.strip() == "error: no migration"


def test_runtime_error_without_position_is_located_by_line(tmp_path: Path, pg_url: str) -> None:
    """Bad SQL reports file:line also for errors that carry no position (a constraint violation)."""
    d = write(tmp_path / "m", {"20240101000000_u.up.sql":
                               "CREATE TABLE u (id int PRIMARY KEY);\nINSERT INTO u VALUES (1);\n\n"
                               "INSERT INTO u\n  VALUES (1);\n"})
    code, doc, _ = fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 1 and doc["error"]["line"] == 4 and doc["error"]["sqlstate"] == "23505"
    assert query(pg_url, "SELECT count(*) FROM pg_tables WHERE tablename = 'u'") == [(0,)]


def test_non_transactional_file_fails_partly_and_says_so(tmp_path: Path, pg_url: str) -> None:
    """A file with CREATE INDEX CONCURRENTLY cannot run in a transaction: it runs statement by
    statement (as golang-migrate runs it); a failure after the first statement is reported as
    applied partly, with the repair for each case."""
    d = write(tmp_path / "m", {"20240101000000_i.up.sql":
                               "CREATE TABLE i (n int);\nCREATE INDEX CONCURRENTLY i_n ON i (n);\n"
                               "CREATE INDEX CONCURRENTLY i_missing ON i (missing);\n"})
    code, doc, _ = fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 1 and doc["error"]["applied"] == "partly" and doc["error"]["line"] == 3
    assert query(pg_url, "SELECT count(*) FROM pg_indexes WHERE indexname = 'i_n'") == [(1,)]
    assert query(pg_url, "SELECT version, dirty FROM schema_migrations") == [(20240101000000, True)]


def test_force_refuses_an_unknown_version_and_bad_input(tmp_path: Path, pg_url: str) -> None:
    """db migrate force records a file's version; a typo is refused, a non-number is a usage error."""
    d = write(tmp_path / "m", {"20240101000000_a.up.sql": "SELECT 1;\n"})
    code, doc, _ = fw("db", "migrate", "force", "20240101000001", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 1 and "no migration file has version 20240101000001" in doc["error"]["message"]
    code, doc, _ = fw("db", "migrate", "force", "latest", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 2 and doc["error"]["code"] == "usage"


def test_platform_framework_db_is_the_same_command(tmp_path: Path, pg_url: str) -> None:
    """`platform framework db ...` runs the framework program (docs/reference-db.md#commands)."""
    d = write(tmp_path / "m", {"20240101000000_a.up.sql": "SELECT 1;\n"})
    proc = cli_fork.run([str(BIN / "platform"), "framework", "db", "migrate", "up", "--dsn", pg_url, "--dir",
                           str(d), "--json"], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and '"version": 20240101000000' in proc.stdout


def test_unreachable_database_is_a_clear_error(tmp_path: Path) -> None:
    """A DSN that cannot be reached: exit 1, one line naming it, no password echoed, no traceback."""
    d = write(tmp_path / "m", {"20240101000000_a.up.sql": "SELECT 1;\n"})
    code, doc, err = fw("db", "migrate", "up", "--dsn", "postgresql://u:s3cret@127.0.0.1:1/x", "--dir", str(d),
                        cwd=tmp_path)
    assert code == 1 and doc["error"]["code"] == "database_error"
    assert "s3cret" not in err and "s3cret" not in str(doc) and "Traceback" not in err


def test_unbalanced_parenthesis_is_still_run_and_reported(tmp_path: Path, pg_url: str) -> None:
    """Bad SQL reports file:line even where the statement splitter gives up (an unbalanced
    parenthesis): the file is run, never skipped as empty."""
    d = write(tmp_path / "m", {"20240101000000_p.up.sql": "SELECT 1;\n\nCREATE TABLE (;\n"})
    code, doc, _ = fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 1 and doc["error"]["line"] == 3 and doc["error"]["sqlstate"] == "42601"


def test_x_migrations_table_is_golang_migrates(tmp_path: Path, pg_url: str) -> None:
    """golang-migrate's `x-migrations-table` DSN parameter names the table (and the lock) for both."""
    d = write(tmp_path / "m", LEGACY_AND_TIMESTAMPS)
    url = pg_url + "?x-migrations-table=custom_versions"
    assert golang_migrate(d, url, "up", "2").returncode == 0
    code, doc, _ = fw("db", "migrate", "up", "--dsn", url, "--dir", str(d), cwd=tmp_path)
    assert code == 0 and [a["version"] for a in doc["applied_now"]] == [20240101000000, 20240102000000]
    assert query(pg_url, "SELECT version, dirty FROM custom_versions") == [(20240102000000, False)]
    assert query(pg_url, "SELECT to_regclass('schema_migrations') IS NULL") == [(True,)]


def test_down_files_are_never_run_and_status_lists_them(tmp_path: Path, pg_url: str) -> None:
    """Forward-only (docs/reference-db.md#migrations-golang-migrate-compatible): a .down.sql is never run;
    status names it."""
    d = write(tmp_path / "m", {"20240101000000_a.up.sql": "CREATE TABLE a (id int);\n",
                               "20240101000000_a.down.sql": "DROP TABLE a;\n"})
    code, doc, _ = fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert code == 0 and len(doc["applied_now"]) == 1
    code, doc, _ = fw("db", "migrate", "status", "--dsn", pg_url, "--dir", str(d), cwd=tmp_path)
    assert doc["ignored_down"] == ["20240101000000_a.down.sql"] and doc["pending"] == []
    assert query(pg_url, "SELECT to_regclass('a') IS NOT NULL") == [(True,)]
