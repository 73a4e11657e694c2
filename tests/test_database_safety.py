"""`framework ci migration-safety` (docs/reference-db.md#ci-migration-safety): squawk's rules through its JSON
reporter plus our pglast checks, each finding with file:line, rule and the safe alternative;
non-zero exactly on an error-level finding."""

from __future__ import annotations

from pathlib import Path

from tests.database_fixtures import fw, write

UNSAFE = {
    "20240101000000_base.up.sql": "CREATE TABLE accounts (id bigint PRIMARY KEY, email text);\n",
    "20240102000000_unsafe.up.sql": (
        "-- line 1 is a comment\n"
        "ALTER TABLE accounts ALTER COLUMN email TYPE varchar(200);\n"
        "ALTER TABLE accounts ADD COLUMN plan text NOT NULL;\n"
        "CREATE INDEX accounts_email ON accounts (email);\n"
        "UPDATE accounts SET plan = 'free';\n"
        "VACUUM FULL accounts;\n"
    ),
}


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "proj"
    write(root / "db" / "migrations", files)
    (root / "framework.yaml").write_text("name: proj\n")
    return root


def test_unsafe_patterns_are_reported_with_file_line_rule_and_alternative(tmp_path: Path) -> None:
    """Patterns that fail or lock a populated table exit 1; findings name file:line, the rule,
    its level and the safe alternative, from both squawk and our own checks."""
    root = _project(tmp_path, UNSAFE)
    code, doc, err = fw("ci", "migration-safety", cwd=root)
    assert code == 1 and doc["error"]["code"] == "unsafe_migration"
    by_rule = {(f["rule"], Path(f["file"]).name, f["line"]): f for f in doc["findings"]}
    unsafe = "20240102000000_unsafe.up.sql"
    assert by_rule[("changing-column-type", unsafe, 2)]["level"] == "error"
    assert by_rule[("adding-required-field", unsafe, 3)]["source"] == "squawk"
    concurrent = by_rule[("require-concurrent-index-creation", unsafe, 4)]
    assert concurrent["level"] == "error" and "concurrently" in concurrent["safe_alternative"].lower()
    assert by_rule[("full-table-write", unsafe, 5)]["level"] == "warning"
    vacuum = by_rule[("vacuum-full", unsafe, 6)]
    assert vacuum["source"] == "framework" and vacuum["level"] == "error"
    assert by_rule[("no-transaction-statement-not-alone", unsafe, 6)]["level"] == "error"
    assert doc["errors"] == sum(f["level"] == "error" for f in doc["findings"])


def test_safe_migrations_pass_and_a_new_table_may_be_indexed_in_its_transaction(tmp_path: Path) -> None:
    """No error-level finding: exit 0. A table created in the same file is empty, so indexing it
    without CONCURRENTLY is safe (squawk with --assume-in-transaction knows); a concurrent
    index alone in its own file is the safe alternative for an existing table."""
    root = _project(tmp_path, {
        "20240101000000_base.up.sql": "CREATE TABLE accounts (id bigint PRIMARY KEY, email text);\n"
                                      "CREATE INDEX accounts_email ON accounts (email);\n",
        "20240102000000_idx.up.sql": "CREATE INDEX CONCURRENTLY IF NOT EXISTS accounts_id_email "
                                     "ON accounts (id, email);\n",
    })
    code, doc, _ = fw("ci", "migration-safety", cwd=root)
    assert code == 0 and doc["errors"] == 0, doc["findings"]


def test_named_files_and_syntax_errors(tmp_path: Path) -> None:
    """Files named on the command line are checked alone; a statement that does not parse is an
    error with its line."""
    root = _project(tmp_path, {"20240101000000_bad.up.sql": "SELECT 1;\n\nCREATE TABLE (;\n"})
    code, doc, _ = fw("ci", "migration-safety", str(root / "db/migrations/20240101000000_bad.up.sql"), cwd=tmp_path)
    assert code == 1
    bad = [f for f in doc["findings"] if f["rule"] == "syntax-error"]
    assert bad and bad[0]["line"] == 3


def test_outside_a_project_without_files_is_a_clear_error(tmp_path: Path) -> None:
    """Bad input: no project and no files, a clear error (no traceback)."""
    code, doc, err = fw("ci", "migration-safety", cwd=tmp_path)
    assert code == 1 and doc["error"]["code"] == "project_not_found" and "Traceback" not in err


def test_since_checks_only_migrations_changed_on_the_branch(tmp_path: Path) -> None:
    """--since <ref>: files already on the default branch (they have run) do not gate; a branch's
    new file does, committed or not."""
    import subprocess

    root = _project(tmp_path, UNSAFE)

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=root, check=True,
                       capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "main")
    git("checkout", "-q", "-b", "feature")
    code, doc, _ = fw("ci", "migration-safety", "--since", "main", cwd=root)
    assert code == 0 and doc["files"] == [] and doc["findings"] == []
    write(root / "db" / "migrations", {"20240103000000_new.up.sql":
                                       "ALTER TABLE accounts ADD COLUMN n int NOT NULL;\n"})
    code, doc, _ = fw("ci", "migration-safety", "--since", "main", cwd=root)
    assert code == 1 and [Path(f).name for f in doc["files"]] == ["20240103000000_new.up.sql"]
    git("add", "-A")
    git("commit", "-qm", "new")
    code, doc, _ = fw("ci", "migration-safety", "--since", "main", cwd=root)
    assert code == 1 and [Path(f).name for f in doc["files"]] == ["20240103000000_new.up.sql"]
    code, doc, err = fw("ci", "migration-safety", "--since", "nope", cwd=root)
    assert code == 1 and "not a git revision" in err
