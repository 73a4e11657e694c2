"""`db migration new` and `db migration rebase` (docs/reference-db.md#commands: a file already on the
default branch is refused)."""

from __future__ import annotations

import os
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from engine.database import files as mfiles
from engine.database.dsn import Dsn
from engine.database.errors import DatabaseAuthoringError, Refused
from engine.errors import UsageError
from engine.git import git_output

_CREATE_TABLE = re.compile(r"create\s+table\s+(?:if\s+not\s+exists\s+)?([\w.\"]+)", re.I)


class NewMigration(BaseModel):
    version: int
    file: str
    context: str  # "database" (from --dsn) or "files"


class Move(BaseModel):
    old: str
    new: str
    old_version: int
    new_version: int
    git: bool


class RebaseResult(BaseModel):
    base: str | None
    current_version: int | None
    current_from: str  # "database" or "default branch"
    moves: list[Move]
    unchanged: list[str]


def migrations_dir(directory: str | None) -> Path:
    """`--dir`, else `<project>/db/migrations`."""
    if directory:
        return Path(directory)
    from engine.project import find_project

    return find_project().root / mfiles.MIGRATIONS_DIR


def _context_from_database(dsn: Dsn) -> tuple[list[str], int | None]:
    from engine.database import runner
    from engine.database.introspect import introspect, summary_lines

    schema = introspect(dsn)
    current = runner.version(dsn)
    head = [f"database {schema.database} at version {current.version if current.version is not None else 'none'}"
            + (" (dirty)" if current.dirty else "") + f", {len(schema.tables)} tables:"]
    return head + [f"  {line}" for line in summary_lines(schema)], current.version


def _context_from_files(migrations: mfiles.MigrationSet) -> list[str]:
    tables: list[str] = []
    for f in migrations.files:
        for name in _CREATE_TABLE.findall(f.read()):
            name = name.replace('"', "")
            if name not in tables:
                tables.append(name)
    recent = [f.filename for f in migrations.files[-5:]]
    lines = [f"{len(migrations.files)} earlier migrations; tables they create: {', '.join(tables) or 'none'}"]
    if recent:
        lines.append("latest files: " + ", ".join(recent))
    lines.append("(pass --dsn for the live schema: columns, types, keys)")
    return lines


def new_migration(name: str, directory: Path, dsn: Dsn | None, now: datetime | None = None) -> NewMigration:
    slug = mfiles.check_name(name)
    directory.mkdir(parents=True, exist_ok=True)
    migrations = mfiles.load(directory)
    existing = migrations.versions
    if dsn is not None:
        context, db_version = _context_from_database(dsn)
        if db_version is not None:
            existing = existing + [db_version]
    else:
        context = _context_from_files(migrations)
    version = mfiles.next_versions(existing, 1, now)[0]
    path = directory / f"{version}_{slug}.up.sql"
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = [f"-- {path.name}: created {stamp} by `framework db migration new`.",
            "-- Forward-only: there is no down migration; a bad migration is repaired by a new one.",
            "-- It runs in one transaction (unless it holds CREATE INDEX CONCURRENTLY or BEGIN/COMMIT).",
            "-- Check it with `framework ci migration-safety` before merging.",
            "--", "-- Schema context:"]
    body += [f"--   {line}" for line in context]
    body += ["", ""]
    tmp = path.with_suffix(".tmp")
    with open(tmp, "x", encoding="utf-8") as fh:
        fh.write("\n".join(body))
    os.replace(tmp, path)
    return NewMigration(version=version, file=str(path), context="database" if dsn else "files")


def default_branch(root: Path) -> str | None:
    """origin's HEAD when known, else a local main or master."""
    ref = git_output(root, "symbolic-ref", "--short", "-q", "refs/remotes/origin/HEAD")
    if ref:
        return ref
    for name in ("origin/main", "origin/master", "main", "master"):
        if git_output(root, "rev-parse", "--verify", "-q", name) is not None:
            return name
    return None


def _on_branch(root: Path, base: str, rel_dir: str) -> set[str]:
    out = git_output(root, "ls-tree", "-r", "--name-only", base, "--", rel_dir) or ""
    return {Path(p).name for p in out.splitlines()}


def rebase(paths: list[str], all_pending: bool, directory: Path, dsn: Dsn | None, base: str | None = None,
           now: datetime | None = None) -> RebaseResult:
    if bool(paths) == all_pending:
        raise UsageError("name the files to rebase, or pass --all-pending (not both)",
                         hint="framework db migration rebase --all-pending")
    migrations = mfiles.load(directory)
    root_text = git_output(directory, "rev-parse", "--show-toplevel")
    if root_text is None:
        raise DatabaseAuthoringError(f"{directory} is not in a git checkout",
                                     hint="rebase moves tracked files with git")
    root = Path(root_text)
    base = base or default_branch(root)
    rel_dir = str(directory.resolve().relative_to(root.resolve()))
    on_base = _on_branch(root, base, rel_dir) if base else set()
    if dsn is not None:
        from engine.database.runner import version as db_version

        current, current_from = db_version(dsn).version, "database"
    else:
        base_versions = [int(m["version"]) for n in on_base if (m := mfiles.FILE_RE.match(n))]
        current, current_from = max(base_versions, default=None), "default branch"
    if all_pending:
        chosen = [f for f in migrations.files if f.filename not in on_base]
    else:
        chosen = []
        for p in paths:
            path = Path(p)
            f = next((m for m in migrations.files if m.path.resolve() == path.resolve()), None)
            if f is None:
                raise UsageError(f"{p} is not a migration file of {directory}")
            if f.filename in on_base:
                raise Refused(f"{f.filename} is already on the default branch ({base}): re-versioning it would "
                              "change a migration others may have applied",
                              hint="leave it as it is; repair with a new forward migration")
            chosen.append(f)
    movable = [f for f in chosen if current is not None and f.version <= current]
    unchanged = [f.filename for f in chosen if f not in movable]
    others = [v for v in migrations.versions if v not in {f.version for f in movable}]
    fresh = mfiles.next_versions(others + ([current] if current is not None else []), len(movable), now)
    moves = []
    for f, version in zip(sorted(movable, key=lambda m: m.version), fresh, strict=True):
        target = f.path.with_name(f"{version}_{f.name}.up.sql")
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", str(f.path)], cwd=root,
                                 capture_output=True).returncode == 0
        if tracked:
            if git_output(root, "mv", str(f.path), str(target)) is None:
                raise DatabaseAuthoringError(f"git mv {f.path} {target} failed")
        else:
            os.replace(f.path, target)
        moves.append(Move(old=f.filename, new=target.name, old_version=f.version, new_version=version, git=tracked))
    return RebaseResult(base=base, current_version=current, current_from=current_from, moves=moves,
                        unchanged=unchanged)
