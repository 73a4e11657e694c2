"""`framework db seed apply|reset|status` on real PostgreSQL (docs/reference-db.md#seeds: seed inputs,
`database.seed.tables`, `framework:ref`; the guards: dev only, refused on pending or dirty migrations)."""

from __future__ import annotations

import glob
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.database_fixtures import fw, query, without_demo_database, write
from tests.pg_fixtures import PgServer, pg_url  # noqa: F401

SCHEMA = {
    "20240101000000_orgs.up.sql": """
CREATE TYPE task_state AS ENUM ('open', 'doing', 'done');
CREATE TABLE orgs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text NOT NULL UNIQUE);
CREATE TABLE users (id bigserial PRIMARY KEY, org_id bigint NOT NULL REFERENCES orgs(id),
                    email text NOT NULL UNIQUE, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE projects (id uuid PRIMARY KEY, org_id bigint NOT NULL REFERENCES orgs(id), title varchar(80));
CREATE TABLE tasks (id bigserial PRIMARY KEY, project_id uuid NOT NULL REFERENCES projects(id),
                    assignee_id bigint REFERENCES users(id), state task_state NOT NULL, due_on date,
                    parent_id bigint REFERENCES tasks(id), points integer, done boolean NOT NULL);
CREATE TABLE tags (name text PRIMARY KEY);
CREATE TABLE task_tags (task_id bigint REFERENCES tasks(id), tag text REFERENCES tags(name),
                        PRIMARY KEY (task_id, tag));
""",
}
REF = {"20240102000000_ref.up.sql":
       "COMMENT ON COLUMN tasks.assignee_id IS 'framework:ref derived-from=project_id';\n"}
VOCAB = """\
rows: 6
tables:
  tasks: {rows: 20}
  tags: {rows: 3}
columns:
  tasks.state: {values: [open, doing, stuck, done]}
  points: {values: [1, 2, "three", 5]}
  tasks.due_on: {offset: 7d}
  bogus: 12
"""


@pytest.fixture
def project(demo_project: Path) -> Path:
    without_demo_database(demo_project)
    write(demo_project / "db" / "migrations", {**SCHEMA, **REF})
    write(demo_project / "db" / "seeds", {"vocab.yaml": VOCAB})
    return demo_project


def _migrate(root: Path, url: str) -> None:
    code, doc, _ = fw("db", "migrate", "up", "--dsn", url, cwd=root)
    assert code == 0, doc


def _seed(root: Path, url: str, *args: str) -> tuple[int, dict, str]:
    return fw("db", "seed", *args, "--dsn", url, "--now", "2025-01-01", cwd=root)


def test_apply_is_fk_ordered_consistent_and_warns_on_invalid_vocab(project: Path, pg_url: str) -> None:
    """seed apply: parents before children, a framework:ref derived-from column agrees with its
    source's ancestor, invalid vocab values are skipped with a warning naming file and line."""
    _migrate(project, pg_url)
    code, doc, err = _seed(project, pg_url, "apply")
    assert code == 0, doc
    assert list(doc["inserted"]) == ["orgs", "projects", "tags", "users", "tasks", "task_tags"]
    assert doc["inserted"]["tasks"] == 20 and doc["inserted"]["orgs"] == 6
    assert any(w.startswith("db/seeds/vocab.yaml:6:") and "'stuck'" in w for w in doc["warnings"])
    assert any(w.startswith("db/seeds/vocab.yaml:7:") and "'three'" in w for w in doc["warnings"])
    assert any(w.startswith("db/seeds/vocab.yaml:9:") for w in doc["warnings"])
    assert "warning: db/seeds/vocab.yaml:6:" in err
    # derived-from: each task's assignee belongs to the org of the task's project
    assert query(pg_url, "SELECT count(*) FROM tasks t JOIN projects p ON p.id = t.project_id "
                         "JOIN users u ON u.id = t.assignee_id WHERE u.org_id <> p.org_id") == [(0,)]
    assert query(pg_url, "SELECT count(*) FROM tasks WHERE assignee_id IS NULL") == [(0,)]
    assert {r[0] for r in query(pg_url, "SELECT DISTINCT state::text FROM tasks")} <= {"open", "doing", "done"}
    assert {r[0] for r in query(pg_url, "SELECT DISTINCT points FROM tasks")} <= {1, 2, 5}
    assert query(pg_url, "SELECT DISTINCT due_on FROM tasks") == [(__import__("datetime").date(2025, 1, 8),)]
    # sequences continue after the seeded ids: a user's insert does not collide
    query(pg_url, "INSERT INTO orgs (name) VALUES ('mine') RETURNING id")


def test_second_apply_inserts_nothing(project: Path, pg_url: str) -> None:
    """Idempotent: a second apply inserts nothing and changes no row."""
    _migrate(project, pg_url)
    assert _seed(project, pg_url, "apply")[0] == 0
    before = query(pg_url, "SELECT count(*) FROM tasks")
    code, doc, _ = _seed(project, pg_url, "apply")
    assert code == 0 and doc["inserted"] == {} and doc["custom_applied"] == []
    assert query(pg_url, "SELECT count(*) FROM tasks") == before


def _pg_dump() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_dump")) or [shutil.which("pg_dump") or "pg_dump"]
    return found[-1]


def test_deterministic_across_two_fresh_databases(project: Path, pg_server: PgServer, pg_url: str) -> None:
    """Same input -> same rows, byte for byte: two fresh databases seeded alike dump identically."""
    from pytest_postgresql.janitor import DatabaseJanitor

    dumps = []
    with DatabaseJanitor(user=pg_server.user, host=pg_server.host, port=pg_server.port, dbname="t_det_two",
                         password=None):
        for url in (pg_url, pg_server.url("t_det_two")):
            _migrate(project, url)
            assert _seed(project, url, "apply")[0] == 0
            text = subprocess.run([_pg_dump(), "--data-only", "--no-owner", "--inserts", url],
                                  capture_output=True, text=True, check=True).stdout
            # pg_dump's \restrict line carries a random key per run; everything else is data
            dumps.append("\n".join(line for line in text.splitlines() if not line.startswith(("\\restrict",
                                                                                             "\\unrestrict"))))
    assert "INSERT INTO public.tasks" in dumps[0]
    assert dumps[0] == dumps[1]


def test_two_parent_paths_are_refused_until_framework_ref(demo_project: Path, pg_url: str) -> None:
    """Refuses an entity reachable by two parent paths until a framework:ref comment decides it;
    nothing is written (one transaction)."""
    without_demo_database(demo_project)
    write(demo_project / "db" / "migrations", SCHEMA)
    _migrate(demo_project, pg_url)
    code, doc, err = _seed(demo_project, pg_url, "apply")
    assert code == 1 and doc["error"]["code"] == "refused"
    assert "tasks is reachable from orgs by two parent paths" in err
    assert "tasks.project_id -> projects -> orgs" in err and "tasks.assignee_id -> users -> orgs" in err
    assert "COMMENT ON COLUMN tasks.project_id IS 'framework:ref derived-from=assignee_id'" in doc["error"]["hint"]
    assert query(pg_url, "SELECT count(*) FROM orgs") == [(0,)]
    assert query(pg_url, "SELECT to_regclass('framework_seeds') IS NULL") == [(True,)]
    write(demo_project / "db" / "migrations", {"20240102000000_ref.up.sql":
                                              "COMMENT ON COLUMN tasks.assignee_id IS 'framework:ref independent';\n"})
    _migrate(demo_project, pg_url)
    assert _seed(demo_project, pg_url, "apply")[0] == 0


def test_reset_deletes_seeded_rows_child_first_and_keeps_user_rows(project: Path, pg_url: str) -> None:
    """seed reset: seeded rows deleted child-first and seeded again; user rows and schema stay;
    status gives per-table seeded-row counts."""
    _migrate(project, pg_url)
    assert _seed(project, pg_url, "apply")[0] == 0
    query(pg_url, "INSERT INTO tags (name) VALUES ('users-own-tag')")
    code, doc, _ = fw("db", "seed", "status", "--dsn", pg_url, cwd=project)
    counts = {t["table"]: (t["seeded"], t["rows"]) for t in doc["tables"]}
    assert code == 0 and counts["tags"] == (3, 4) and counts["tasks"] == (20, 20)
    code, doc, _ = _seed(project, pg_url, "reset")
    assert code == 0, doc
    assert list(doc["deleted"]) == ["task_tags", "tasks", "users", "tags", "projects", "orgs"]
    assert doc["deleted"]["tasks"] == 20 and doc["inserted"]["tasks"] == 20
    assert query(pg_url, "SELECT count(*) FROM tags WHERE name = 'users-own-tag'") == [(1,)]
    code, doc, _ = fw("db", "seed", "status", "--dsn", pg_url, cwd=project)
    assert {t["table"]: (t["seeded"], t["rows"]) for t in doc["tables"]}["tags"] == (3, 4)


def test_empty_table_list_applies_only_custom_seeds(project: Path, pg_url: str) -> None:
    """database.seed.tables: [] synthesizes nothing and applies only db/seeds/custom/ (recorded as
    seeded rows, so reset removes them); with no custom seeds either, seeding nothing is an error."""
    config = project / "framework.yaml"
    config.write_text(config.read_text() + "database:\n  seed:\n    tables: []\n")
    _migrate(project, pg_url)
    code, doc, err = _seed(project, pg_url, "apply")
    assert code == 1 and "seeding nothing" in err
    write(project / "db" / "seeds" / "custom", {"01_orgs.sql": "INSERT INTO orgs (name) VALUES ('acme');\n"})
    code, doc, _ = _seed(project, pg_url, "apply")
    assert code == 0 and doc["inserted"] == {} and doc["custom_applied"] == ["01_orgs.sql"]
    assert query(pg_url, "SELECT name FROM orgs") == [("acme",)]
    code, doc, _ = _seed(project, pg_url, "apply")
    assert code == 0 and doc["custom_applied"] == [] and query(pg_url, "SELECT count(*) FROM orgs") == [(1,)]
    code, doc, _ = _seed(project, pg_url, "reset")
    assert code == 0 and doc["deleted"] == {"orgs": 1} and doc["custom_applied"] == ["01_orgs.sql"]


def test_refused_on_pending_or_dirty_migrations(project: Path, pg_url: str) -> None:
    """Seed guards (docs/reference-db.md#seeds): seed apply or reset is refused when migrations are pending or dirty."""
    code, doc, err = _seed(project, pg_url, "apply")
    assert code == 1 and doc["error"]["code"] == "refused" and "pending" in err
    _migrate(project, pg_url)
    query(pg_url, "UPDATE schema_migrations SET dirty = true")
    code, doc, err = _seed(project, pg_url, "reset")
    assert code == 1 and "dirty" in err


def test_refused_for_non_dev_environments_and_remote_dsns(project: Path, pg_url: str) -> None:
    """Seed guards (docs/reference-db.md#seeds: dev only) and the DSN rule: a non-dev environment is
    refused; a non-loopback DSN that is not the environment's own needs --allow-remote-dsn."""
    _migrate(project, pg_url)
    code, doc, err = fw("db", "seed", "apply", "--dsn", pg_url, "--env", "prod", cwd=project)
    assert code == 1 and "not a development environment" in err
    code, doc, err = fw("db", "seed", "apply", "--dsn", "postgresql://app:pw@db.example.com/app", cwd=project)
    assert code == 1 and "--allow-remote-dsn" in doc["error"]["hint"] and "pw@" not in err


MARKERS = {
    "20240101000000_m.up.sql": """
CREATE TABLE tenants (id bigserial PRIMARY KEY);
CREATE TABLE members (id bigserial PRIMARY KEY, tenant_id bigint NOT NULL REFERENCES tenants(id));
CREATE TABLE boards (id bigserial PRIMARY KEY, tenant_id bigint NOT NULL REFERENCES tenants(id));
CREATE TABLE cards (id bigserial PRIMARY KEY, member_id bigint NOT NULL REFERENCES members(id),
                    board_id bigint NOT NULL REFERENCES boards(id));
COMMENT ON COLUMN cards.board_id IS 'framework:owner';
CREATE TABLE events (id bigserial PRIMARY KEY, at timestamptz NOT NULL);
COMMENT ON TABLE events IS 'framework:append-only';
""",
}


def test_owner_decides_two_paths_and_append_only_rows_are_never_deleted(demo_project: Path, pg_url: str) -> None:
    """framework:owner where it matters: an owner foreign key is authoritative for two parent
    paths (each card's member shares the board's tenant). framework:append-only: seed reset
    refuses to delete its seeded rows (and changes nothing)."""
    without_demo_database(demo_project)
    write(demo_project / "db" / "migrations", MARKERS)
    _migrate(demo_project, pg_url)
    code, doc, _ = _seed(demo_project, pg_url, "apply")
    assert code == 0, doc
    assert query(pg_url, "SELECT count(*) FROM cards c JOIN members m ON m.id = c.member_id "
                         "JOIN boards b ON b.id = c.board_id WHERE m.tenant_id <> b.tenant_id") == [(0,)]
    code, doc, err = _seed(demo_project, pg_url, "reset")
    assert code == 1 and "events is framework:append-only" in err
    assert query(pg_url, "SELECT count(*) FROM events") == [(10,)]
    assert query(pg_url, "SELECT count(*) FROM framework_seeds") == [(50,)]


def test_a_row_the_database_refuses_is_named_and_nothing_is_written(demo_project: Path, pg_url: str) -> None:
    """One transaction (all or nothing): a CHECK the synthesized values miss is named with its
    table and constraint, nothing is written; vocab values that satisfy it fix it."""
    without_demo_database(demo_project)
    write(demo_project / "db" / "migrations", {"20240101000000_c.up.sql":
                                              "CREATE TABLE a (id bigserial PRIMARY KEY);\n"
                                              "CREATE TABLE b (id bigserial PRIMARY KEY, a_id bigint REFERENCES a(id),"
                                              " qty integer NOT NULL CONSTRAINT big_qty CHECK (qty >= 100));\n"})
    _migrate(demo_project, pg_url)
    code, doc, err = _seed(demo_project, pg_url, "apply")
    assert code == 1 and "table b" in err and "constraint big_qty" in err and "vocab.yaml" in doc["error"]["hint"]
    assert query(pg_url, "SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b)") == [(0,)]
    write(demo_project / "db" / "seeds", {"vocab.yaml": "columns:\n  b.qty: {values: [100, 250]}\n"})
    code, doc, _ = _seed(demo_project, pg_url, "apply")
    assert code == 0 and doc["inserted"] == {"a": 10, "b": 10}
