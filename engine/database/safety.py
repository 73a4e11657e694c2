"""`framework ci migration-safety` (docs/reference-db.md#ci-migration-safety): SQL patterns that fail or
lock populated databases.

Two sources: squawk-cli's rules (its JSON reporter; the binary ships in its wheel) and our own
checks on pglast's parse tree for what squawk does not see. Each finding has file:line, the rule,
a level and the safe alternative; an error-level finding makes the command exit non-zero.
Files our runner wraps in a transaction are checked with `--assume-in-transaction`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.database import statements as sql
from engine.database.errors import DatabaseAuthoringError

ERROR, WARNING = "error", "warning"

# squawk rule -> our level: errors fail or lock a populated table; warnings break clients or are advice.
SQUAWK_LEVELS: dict[str, str] = {
    "adding-not-nullable-field": ERROR,
    "adding-required-field": ERROR,
    "changing-column-type": ERROR,
    "adding-foreign-key-constraint": ERROR,
    "constraint-missing-not-valid": ERROR,
    "require-concurrent-index-creation": ERROR,
    "disallowed-unique-constraint": ERROR,
    "adding-serial-primary-key-field": ERROR,
    "adding-field-with-default": ERROR,
    "ban-concurrent-index-creation-in-transaction": ERROR,
    "ban-drop-database": ERROR,
    "ban-truncate-cascade": ERROR,
    "adding-primary-key-constraint": ERROR,
    "ban-drop-column": WARNING,
    "ban-drop-table": WARNING,
    "ban-drop-not-null": WARNING,
    "renaming-column": WARNING,
    "renaming-table": WARNING,
    "require-lock-timeout": WARNING,
    "prefer-bigint-over-int": WARNING,
    "prefer-bigint-over-smallint": WARNING,
    "prefer-identity": WARNING,
    "prefer-text-field": WARNING,
    "prefer-timestamptz": WARNING,
    "ban-char-field": WARNING,
    "transaction-nesting": WARNING,
}
# Noise for this runner: each file already runs in one transaction (robustness), and statement
# timeouts are the operator's choice.
SQUAWK_EXCLUDED = ("prefer-robust-stmts", "require-statement-timeout")


class Finding(BaseModel):
    file: str
    line: int
    rule: str
    level: str
    message: str
    safe_alternative: str | None
    source: str  # "squawk" or "framework"


class SafetyReport(BaseModel):
    files: list[str]
    findings: list[Finding]
    errors: int
    warnings: int


def squawk_binary() -> str:
    local = Path(sys.executable).parent / "squawk"
    found = str(local) if local.is_file() else shutil.which("squawk")
    if not found:
        raise DatabaseAuthoringError("squawk is not installed", hint="pip install squawk-cli (a dependency)")
    return found


def _squawk(paths: list[Path], in_transaction: bool) -> list[Finding]:
    if not paths:
        return []
    cmd = [squawk_binary(), "--reporter", "json", "--exclude", ",".join(SQUAWK_EXCLUDED)]
    if in_transaction:
        cmd.append("--assume-in-transaction")
    proc = subprocess.run([*cmd, *map(str, paths)], capture_output=True, text=True, timeout=120, check=False)
    try:
        raw: list[dict[str, Any]] = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError as exc:
        raise DatabaseAuthoringError(f"squawk failed (exit {proc.returncode}): {proc.stderr.strip()[:300]}") from exc
    out = []
    for item in raw:
        rule = item.get("rule_name") or "squawk"
        out.append(Finding(file=item["file"], line=int(item.get("line") or 0) + 1, rule=rule,
                           level=SQUAWK_LEVELS.get(rule, ERROR if item.get("level") == "Error" else WARNING),
                           message=item.get("message") or "",
                           safe_alternative=item.get("help"), source="squawk"))
    return out


def _own(path: Path, stmts: list[sql.Statement]) -> list[Finding]:
    """Our checks on the parse tree (what squawk does not flag)."""
    import pglast
    from pglast import ast

    found: list[Finding] = []

    def add(stmt: sql.Statement, rule: str, level: str, message: str, alternative: str) -> None:
        found.append(Finding(file=str(path), line=stmt.line, rule=rule, level=level, message=message,
                             safe_alternative=alternative, source="framework"))

    concurrent = [s for s in stmts if sql.needs_no_transaction([s])]
    for stmt in stmts:
        try:
            parsed = pglast.parse_sql(stmt.text)
        except pglast.parser.ParseError:
            continue  # squawk reports syntax errors (rule syntax-error, an error)
        for raw in parsed:
            node = raw.stmt
            if isinstance(node, ast.UpdateStmt | ast.DeleteStmt) and node.whereClause is None:
                verb = "UPDATE" if isinstance(node, ast.UpdateStmt) else "DELETE"
                add(stmt, "full-table-write", WARNING,
                    f"{verb} without WHERE touches every row in one transaction, holding their row locks",
                    "backfill in batches (WHERE id BETWEEN ...) outside the schema migration")
            elif isinstance(node, ast.VacuumStmt) and any(getattr(o, "defname", "") == "full"
                                                          for o in node.options or ()):
                add(stmt, "vacuum-full", ERROR, "VACUUM FULL rewrites the table under an ACCESS EXCLUSIVE lock",
                    "plain VACUUM, or pg_repack outside the migration")
            elif isinstance(node, ast.ClusterStmt):
                add(stmt, "cluster", ERROR, "CLUSTER rewrites the table under an ACCESS EXCLUSIVE lock",
                    "leave physical ordering to maintenance outside migrations (pg_repack)")
            elif isinstance(node, ast.LockStmt):
                add(stmt, "explicit-lock", WARNING, "LOCK TABLE blocks other sessions for the whole migration",
                    "rely on the statement's own lock and set lock_timeout")
            elif isinstance(node, ast.RefreshMatViewStmt) and not node.concurrent:
                add(stmt, "refresh-without-concurrently", WARNING,
                    "REFRESH MATERIALIZED VIEW blocks reads of the view while it runs",
                    "REFRESH MATERIALIZED VIEW CONCURRENTLY (needs a unique index on the view)")
            elif isinstance(node, ast.AlterEnumStmt) and node.newVal is not None:
                add(stmt, "enum-value-in-transaction", WARNING,
                    "a value added by ALTER TYPE ... ADD VALUE cannot be used in the same transaction",
                    "add the value in its own migration, use it in a later one")
    if concurrent and len(stmts) > 1:
        for stmt in concurrent:
            add(stmt, "no-transaction-statement-not-alone", ERROR,
                "a statement that cannot run in a transaction shares its file with others: golang-migrate runs a "
                "file as one multi-statement query (an implicit transaction), where it fails",
                "put it alone in its own migration file")
    return found


def check(paths: list[Path]) -> SafetyReport:
    if not paths:
        raise DatabaseAuthoringError("no migration files to check", hint="pass files, or run inside a project")
    in_tx: list[Path] = []
    outside_tx: list[Path] = []
    findings: list[Finding] = []
    for path in paths:
        try:
            stmts = sql.split(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise DatabaseAuthoringError(f"cannot read {path}: {exc.strerror}") from exc
        (outside_tx if sql.needs_no_transaction(stmts) else in_tx).append(path)
        findings += _own(path, stmts)
    findings += _squawk(in_tx, True) + _squawk(outside_tx, False)
    findings.sort(key=lambda f: (f.file, f.line, f.rule))
    errors = sum(f.level == ERROR for f in findings)
    return SafetyReport(files=[str(p) for p in paths], findings=findings, errors=errors,
                        warnings=len(findings) - errors)


def default_paths(directory: Path) -> list[Path]:
    from engine.database.files import load

    return [f.path for f in load(directory).files]


def changed_since(directory: Path, ref: str) -> list[Path]:
    """Migrations added or changed since `ref` (merge base with HEAD), committed or not: what a CI
    run on a branch should gate on (files already on the default branch have run)."""
    from engine.git import git_output

    root = git_output(directory, "rev-parse", "--show-toplevel")
    if root is None or git_output(directory, "rev-parse", "--verify", "-q", ref) is None:
        raise DatabaseAuthoringError(f"--since {ref}: not a git revision here")
    names = set()
    where = str(directory.resolve())
    for args in (("diff", "--name-only", f"{ref}...HEAD", "--", where), ("diff", "--name-only", "HEAD", "--", where),
                 ("ls-files", "--others", "--exclude-standard", "--", where)):
        # run from the top: diff and ls-files then both print paths relative to it
        names |= {Path(root, n).resolve() for n in (git_output(Path(root), *args) or "").splitlines()}
    return [p for p in default_paths(directory) if p.resolve() in names]


def run(paths: list[str], since: str | None = None) -> SafetyReport:
    """The files named, else the project's migrations (with `since`: only those changed since)."""
    if paths:
        return check([Path(p) for p in paths])
    from engine.database.authoring import migrations_dir

    directory = migrations_dir(None)
    if since:
        changed = changed_since(directory, since)
        if not changed:
            return SafetyReport(files=[], findings=[], errors=0, warnings=0)
        return check(changed)
    return check(default_paths(directory))
