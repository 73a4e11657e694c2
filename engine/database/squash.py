"""`db squash --from-dir <dir> <out-dir>` (docs/reference-db.md#db-squash): one baseline `.up.sql` equal in
effect to the source migrations.

The sources are applied by our runner in a throwaway PostgreSQL, the schema dumped with
pg_dump, the dump applied to a second database of the same server, and both introspected:
the baseline is written only when they are equal. Its version is the newest source version, so
a database already at that version treats it as applied.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.database import files, runner, throwaway
from engine.database.dsn import Dsn, connect
from engine.database.errors import DatabaseAuthoringError
from engine.database.introspect import read_schema

# Session settings of a dump that must not leak into the runner's connection (search_path = '').
_SESSION = re.compile(r"^(SET \w+ = .*;|SELECT pg_catalog\.set_config\(.*\);|\\(un)?restrict .*)$")


class SquashResult(BaseModel):
    sources: int
    version: int
    file: str
    tables: int
    verified: bool


# What introspection of tables does not cover: functions, views, enums, sequences, triggers.
_OBJECTS = """
SELECT 'function', p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', pg_get_functiondef(p.oid)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND p.prokind IN ('f', 'p')
UNION ALL
SELECT 'view', c.relname, pg_get_viewdef(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND c.relkind IN ('v', 'm')
UNION ALL
SELECT 'enum', t.typname, string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e
  JOIN pg_type t ON t.oid = e.enumtypid GROUP BY t.typname
UNION ALL
SELECT 'sequence', c.relname, '' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND c.relkind = 'S'
UNION ALL
SELECT 'trigger', t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE NOT t.tgisinternal
ORDER BY 1, 2
"""


def _objects(conn: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in conn.execute(_OBJECTS).fetchall()]


def _create(admin: Dsn, name: str) -> Dsn:
    with connect(admin) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return Dsn(admin.url.replace("/postgres?", f"/{name}?", 1))


def baseline_sql(dump: str, sources: list[files.MigrationFile]) -> str:
    body = [line for line in dump.splitlines() if not _SESSION.match(line)]
    text = "\n".join(body).strip()
    text = re.sub(r"\n{3,}", "\n\n", text)
    head = (f"-- Baseline squashed by `framework db squash` from {len(sources)} migrations "
            f"({sources[0].filename} .. {sources[-1].filename}).\n"
            "-- Equal in effect to them (verified by introspecting both in a throwaway PostgreSQL).\n")
    return head + text + "\n"


def squash(source_dir: Path, out_dir: Path) -> SquashResult:
    sources = files.load(source_dir)
    if not sources.files:
        raise DatabaseAuthoringError(f"{source_dir} holds no .up.sql migrations")
    newest = sources.files[-1]
    target = out_dir / f"{newest.version}_baseline.up.sql"
    if out_dir.resolve() == source_dir.resolve():
        raise DatabaseAuthoringError("the output directory must not be the source directory",
                                     hint="write the baseline elsewhere, then replace the sources by it")
    with throwaway.server() as (admin, _prefix):
        original = _create(admin, "squash_sources")
        runner.up(original, sources)
        proc = subprocess.run([throwaway.tool("pg_dump"), "--schema-only", "--no-owner", "--no-privileges",
                               "--exclude-table=schema_migrations", "--dbname", original.url],
                              capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0:
            raise DatabaseAuthoringError(f"pg_dump failed: {proc.stderr.strip()[:400]}")
        text = baseline_sql(proc.stdout, sources.files)
        check = _create(admin, "squash_baseline")
        with tempfile.TemporaryDirectory(prefix="framework-squash-") as scratch:
            (Path(scratch) / target.name).write_text(text, encoding="utf-8")
            runner.up(check, files.load(Path(scratch)))
        with connect(original) as a, connect(check) as b:
            left, right = read_schema(a), read_schema(b)
            same = left == right and _objects(a) == _objects(b)
        if not same:
            raise DatabaseAuthoringError("the baseline is not equal in effect to the sources (introspection "
                                         "differs); nothing was written")
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)
    return SquashResult(sources=len(sources.files), version=newest.version, file=str(target),
                        tables=len(left), verified=True)
