"""`project migrate import --from goose --src-dir --dest-dir`
(docs/reference-db.md#project-migrate-import---from-goose).

Keeps each goose file's Up section and drops its Down section; renumbers after the highest
version already in the destination (fresh UTC timestamps, in the sources' order); honours the
annotations: `StatementBegin`/`StatementEnd` blocks stay one statement, and a
`NO TRANSACTION` file becomes one file per statement (each then runs alone, outside a
transaction, in golang-migrate too). Go migrations cannot be imported and are listed as skipped.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import BaseModel

from engine.database import files as mfiles
from engine.database import statements as sql
from engine.database.errors import DatabaseAuthoringError
from engine.errors import UsageError

GOOSE_FILE = re.compile(r"^(?P<version>\d+)_(?P<name>.+)\.(?P<ext>sql|go)$")
ANNOTATION = re.compile(r"^\s*--\s*\+goose\s+(?P<what>.+?)\s*$", re.I)


class Imported(BaseModel):
    source: str
    files: list[str]
    no_transaction: bool


class Skipped(BaseModel):
    file: str
    reason: str


class ImportResult(BaseModel):
    dest_dir: str
    imported: list[Imported]
    skipped: list[Skipped]


def up_statements(text: str, source: str) -> tuple[list[str], bool]:
    """(the Up section's statements, NO TRANSACTION) of one goose file."""
    section = None
    no_tx = False
    statements: list[str] = []
    loose: list[str] = []
    block: list[str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        m = ANNOTATION.match(line)
        if m:
            what = m["what"].upper()
            if what == "UP":
                section = "up"
            elif what == "DOWN":
                section = "down"
            elif what == "NO TRANSACTION":
                no_tx = True
            elif what == "STATEMENTBEGIN" and section == "up":
                statements += _flush(loose)
                block = []
            elif what == "STATEMENTEND" and section == "up":
                if block is None:
                    raise DatabaseAuthoringError(f"{source}:{number}: StatementEnd without StatementBegin")
                statements.append("\n".join(block).strip())
                block = None
            continue  # ENVSUB and other annotations: the annotation line itself is dropped
        if section != "up":
            continue
        (block if block is not None else loose).append(line)
    if block is not None:
        raise DatabaseAuthoringError(f"{source}: StatementBegin without StatementEnd")
    if section is None:
        raise DatabaseAuthoringError(f"{source}: no `-- +goose Up` annotation", hint="is it a goose migration?")
    statements += _flush(loose)
    return [s for s in statements if not sql.is_empty(s)], no_tx


def _flush(lines: list[str]) -> list[str]:
    text = "\n".join(lines)
    lines.clear()
    if sql.is_empty(text):
        return []
    return [s.text.strip().rstrip(";") + ";" for s in sql.split(text)]


def import_goose(src_dir: Path, dest_dir: Path) -> ImportResult:
    if not src_dir.is_dir():
        raise UsageError(f"--src-dir {src_dir} is not a directory")
    sources = []
    skipped = []
    for path in sorted(src_dir.iterdir()):
        m = GOOSE_FILE.match(path.name)
        if not m:
            continue
        if m["ext"] == "go":
            skipped.append(Skipped(file=path.name, reason="a Go migration: port it to SQL by hand"))
            continue
        sources.append((int(m["version"]), m["name"], path))
    sources.sort()
    if not sources:
        raise DatabaseAuthoringError(f"{src_dir} holds no goose SQL migrations (<version>_<name>.sql)")
    dest_dir.mkdir(parents=True, exist_ok=True)
    planned: list[tuple[Path, list[str], bool, str]] = []
    count = 0
    for _version, name, path in sources:
        stmts, no_tx = up_statements(path.read_text(encoding="utf-8"), path.name)
        chunks = [[s] for s in stmts] if no_tx and len(stmts) > 1 else [stmts]
        planned.append((path, ["\n\n".join(c) for c in chunks], no_tx, name))
        count += len(chunks)
    versions = iter(mfiles.next_versions(mfiles.load(dest_dir).versions, count))
    writes: list[tuple[Path, str]] = []
    imported = []
    for path, bodies, no_tx, name in planned:
        names = []
        for k, body in enumerate(bodies, 1):
            suffix = f"_{k}" if len(bodies) > 1 else ""
            target = dest_dir / f"{next(versions)}_{mfiles.check_name(name)}{suffix}.up.sql"
            header = (f"-- Imported from goose {path.name} by `framework project migrate import` (Up section; "
                      "Down dropped: migrations are forward-only).\n")
            if no_tx:
                header += "-- goose NO TRANSACTION: one statement per file, run alone.\n"
            writes.append((target, header + body + "\n"))
            names.append(target.name)
        imported.append(Imported(source=path.name, files=names, no_transaction=no_tx))
    temps = []
    try:
        for target, text in writes:
            tmp = target.with_name(target.name + ".tmp")
            tmp.write_text(text, encoding="utf-8")
            temps.append((tmp, target))
        for tmp, target in temps:
            os.replace(tmp, target)
    finally:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)
    return ImportResult(dest_dir=str(dest_dir), imported=imported, skipped=skipped)
