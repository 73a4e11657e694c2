"""`framework db squash` and `framework project migrate import --from goose` (squash equality:
docs/reference-db.md#db-squash; the goose round trip: docs/reference-db.md#project-migrate-import---from-goose)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.database_fixtures import fw, query, tool, write
from tests.pg_fixtures import PgServer, pg_url  # noqa: F401

SOURCES = {
    "1_init.up.sql": "CREATE TYPE mood AS ENUM ('ok', 'meh');\n"
                     "CREATE TABLE people (id bigserial PRIMARY KEY, name text NOT NULL, m mood);\n",
    "20240101000000_pets.up.sql": "CREATE TABLE pets (id bigserial PRIMARY KEY, owner bigint REFERENCES people(id) "
                                  "ON DELETE CASCADE, CONSTRAINT named CHECK (id > 0));\n"
                                  "CREATE INDEX pets_owner ON pets (owner);\n",
    "20240102000000_more.up.sql": "ALTER TABLE people ADD COLUMN email text UNIQUE;\n"
                                  "CREATE VIEW owners AS SELECT p.name FROM people p JOIN pets ON pets.owner = p.id;\n"
                                  "CREATE FUNCTION two() RETURNS int LANGUAGE sql AS $$ SELECT 2; $$;\n"
                                  "DROP INDEX pets_owner;\nCREATE INDEX pets_owner2 ON pets (owner) WHERE owner > 0;\n",
}


def test_squash_writes_a_baseline_equal_to_the_sources(tmp_path: Path, pg_url: str) -> None:
    """db squash: one baseline .up.sql (version = the newest source) that, applied to a fresh
    database, introspects equal to the sources applied one by one."""
    src = write(tmp_path / "src", SOURCES)
    code, doc, _ = fw("db", "squash", "--from-dir", str(src), str(tmp_path / "out"), cwd=tmp_path)
    assert code == 0, doc
    baseline = Path(doc["file"])
    assert baseline.name == "20240102000000_baseline.up.sql" and doc["verified"] and doc["sources"] == 3
    assert [p.name for p in (tmp_path / "out").iterdir()] == [baseline.name]
    # independently: sources on one database, baseline on another, introspect both
    assert fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(tmp_path / "out"), cwd=tmp_path)[0] == 0
    code, from_baseline, _ = fw("db", "introspect", "--dsn", pg_url, cwd=tmp_path)
    query(pg_url, "DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    assert fw("db", "migrate", "up", "--dsn", pg_url, "--dir", str(src), cwd=tmp_path)[0] == 0
    code, from_sources, _ = fw("db", "introspect", "--dsn", pg_url, cwd=tmp_path)
    assert from_baseline["tables"] == from_sources["tables"] and len(from_sources["tables"]) == 2


def test_squash_refuses_bad_sources_and_writes_nothing(tmp_path: Path) -> None:
    """A source that fails: the error names it and no baseline is written."""
    src = write(tmp_path / "src", {"20240101000000_bad.up.sql": "CREATE TABLE (;\n"})
    code, doc, err = fw("db", "squash", "--from-dir", str(src), str(tmp_path / "out"), cwd=tmp_path)
    assert code == 1 and "20240101000000_bad.up.sql:1" in err and not (tmp_path / "out").exists()


GOOSE = {
    "00001_people.sql": "-- +goose Up\nCREATE TABLE people (id bigserial PRIMARY KEY, name text);\n"
                        "CREATE TABLE audit (at timestamptz);\n\n-- +goose Down\nDROP TABLE people;\n",
    "00002_trigger.sql": "-- +goose Up\n-- +goose StatementBegin\nCREATE FUNCTION stamp() RETURNS trigger "
                         "LANGUAGE plpgsql AS $$\nBEGIN\n  INSERT INTO audit VALUES (now());\n  RETURN NEW;\n"
                         "END;\n$$;\n-- +goose StatementEnd\nCREATE TRIGGER people_stamp AFTER INSERT ON people "
                         "FOR EACH ROW EXECUTE FUNCTION stamp();\n\n-- +goose Down\n-- +goose StatementBegin\n"
                         "DROP FUNCTION stamp();\n-- +goose StatementEnd\n",
    "00003_index.sql": "-- +goose NO TRANSACTION\n-- +goose Up\n"
                       "CREATE INDEX CONCURRENTLY people_name ON people (name);\n"
                       "CREATE INDEX CONCURRENTLY audit_at ON audit (at);\n\n-- +goose Down\n"
                       "DROP INDEX people_name;\n",
    "00004_code.go": "package migrations\n",
}


def test_goose_import_round_trip(tmp_path: Path, pg_server: PgServer, pg_url: str) -> None:
    """project migrate import --from goose: the real goose applies its files to one database, we
    apply the imported ones to another, and both introspect equal. Up kept, Down dropped,
    renumbered after the destination's highest version, StatementBegin/End kept whole, NO
    TRANSACTION split one statement per file, Go migrations skipped."""
    from pytest_postgresql.janitor import DatabaseJanitor

    src = write(tmp_path / "goose", GOOSE)
    dest = write(tmp_path / "dest", {"20300101000000_existing.up.sql": "SELECT 1;\n"})
    code, doc, _ = fw("project", "migrate", "import", "--from", "goose", "--src-dir", str(src), "--dest-dir",
                      str(dest), cwd=tmp_path)
    assert code == 0, doc
    assert doc["skipped"] == [{"file": "00004_code.go", "reason": "a Go migration: port it to SQL by hand"}]
    files = [f for item in doc["imported"] for f in item["files"]]
    assert [item["no_transaction"] for item in doc["imported"]] == [False, False, True]
    assert len(files) == 4 and files == sorted(files) and files[0] > "20300101000000"
    assert files[2].endswith("_index_1.up.sql") and files[3].endswith("_index_2.up.sql")
    texts = [(dest / f).read_text() for f in files]
    assert all("DROP" not in t and "+goose" not in t for t in texts)
    assert "RETURN NEW;\nEND;\n$$;" in texts[1]
    goose = subprocess.run([tool("goose"), "-dir", str(src), "postgres", pg_url + "?sslmode=disable", "up-to", "3"],
                           capture_output=True, text=True, timeout=120, check=False)
    assert goose.returncode == 0, goose.stderr
    with DatabaseJanitor(user=pg_server.user, host=pg_server.host, port=pg_server.port, dbname="t_goose_ours",
                         password=None):
        ours = pg_server.url("t_goose_ours")
        code, up, _ = fw("db", "migrate", "up", "--dsn", ours, "--dir", str(dest), cwd=tmp_path)
        assert code == 0 and len(up["applied_now"]) == 5
        theirs_schema = fw("db", "introspect", "--dsn", pg_url, cwd=tmp_path)[1]["tables"]
        ours_schema = fw("db", "introspect", "--dsn", ours, cwd=tmp_path)[1]["tables"]
        query(ours, "INSERT INTO people (name) VALUES ('x')")
        assert query(ours, "SELECT count(*) FROM audit") == [(1,)]
    assert [t for t in theirs_schema if t["name"] != "goose_db_version"] == ours_schema
    assert {t["name"] for t in ours_schema} == {"people", "audit"}


def test_goose_import_refusals(tmp_path: Path) -> None:
    """Bad input: another tool is a usage error; a file without `+goose Up` is refused, nothing written."""
    src = write(tmp_path / "goose", {"00001_x.sql": "CREATE TABLE x (id int);\n"})
    code, doc, _ = fw("project", "migrate", "import", "--from", "flyway", "--src-dir", str(src), "--dest-dir",
                      str(tmp_path / "dest"), cwd=tmp_path)
    assert code == 2
    code, doc, err = fw("project", "migrate", "import", "--from", "goose", "--src-dir", str(src), "--dest-dir",
                        str(tmp_path / "dest"), cwd=tmp_path)
    assert code == 1 and "00001_x.sql: no `-- +goose Up`" in err
    assert not (tmp_path / "dest").exists() or list((tmp_path / "dest").iterdir()) == []
