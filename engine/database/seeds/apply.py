"""`db seed apply | reset | status` (docs/reference-db.md#seeds).

One transaction (all or nothing); rows written with COPY; every seeded row recorded in
`framework_seeds` (table, primary key, ordinal) so a second apply inserts nothing and `reset`
deletes exactly the seeded rows (child-first), never user rows. Rows inserted by
`db/seeds/custom/*.sql` are recorded too (the rows this transaction created: xmin).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.database.dsn import Dsn, connect
from engine.database.errors import DatabaseAuthoringError, Refused
from engine.database.introspect import Table, read_schema
from engine.database.seeds import plan as planning
from engine.database.seeds import values as gen
from engine.database.seeds.rows import TableRows, synthesize
from engine.database.seeds.vocab import Vocab
from engine.database.seeds.vocab import load as load_vocab
from engine.progress import Reporter, tracked

CUSTOM_DIR = Path("db") / "seeds" / "custom"
LOCK_KEY = 0x5EED  # one seeding at a time per database (transaction-scoped advisory lock)
BOOKKEEPING_DDL = (
    "CREATE TABLE IF NOT EXISTS framework_seeds (table_name text NOT NULL, pk jsonb NOT NULL, ordinal integer, "
    "PRIMARY KEY (table_name, pk))",
    "CREATE TABLE IF NOT EXISTS framework_seed_files (file text PRIMARY KEY, sha256 text NOT NULL)",
)


class TableCount(BaseModel):
    table: str
    seeded: int
    rows: int


class SeedResult(BaseModel):
    database: str
    inserted: dict[str, int]
    custom_applied: list[str]
    warnings: list[str]
    deleted: dict[str, int] = {}
    tables: list[TableCount] = []


class SeedStatus(BaseModel):
    database: str
    tables: list[TableCount]
    custom_applied: list[str]


def _selected(config: dict[str, Any]) -> list[str] | None:
    """`database.seed.tables`: absent = every seedable table; [] = synthesize nothing."""
    seed = ((config.get("database") or {}).get("seed") or {}) if isinstance(config.get("database"), dict) else {}
    tables = seed.get("tables") if isinstance(seed, dict) else None
    if tables is None:
        return None
    if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables):
        raise DatabaseAuthoringError("framework.yaml: database.seed.tables must be a list of table names")
    return list(tables)


def _bookkeeping_exists(conn: Any) -> bool:
    return bool(conn.execute("SELECT to_regclass('framework_seeds') IS NOT NULL").fetchone()[0])


def _enums(conn: Any) -> dict[str, list[str]]:
    rows = conn.execute("SELECT format_type(t.oid, NULL), array_agg(e.enumlabel ORDER BY e.enumsortorder) "
                        "FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid GROUP BY t.oid").fetchall()
    return {name: list(labels) for name, labels in rows}


def _ident(name: str) -> str:
    from psycopg import sql

    return ".".join(sql.Identifier(p).as_string(None) for p in name.split("."))


def _pk_json(table: Table) -> str:
    pk = next(k.columns for k in table.constraints if k.kind == "primary_key")
    from psycopg import sql

    return "jsonb_build_object(" + ", ".join(f"{sql.Literal(c).as_string(None)}, {_ident(c)}" for c in pk) + ")"


def _recorded(conn: Any) -> dict[str, dict[int, dict[str, Any]]]:
    out: dict[str, dict[int, dict[str, Any]]] = {}
    if not _bookkeeping_exists(conn):
        return out
    for table, ordinal, pk in conn.execute(
            "SELECT table_name, ordinal, pk FROM framework_seeds WHERE ordinal IS NOT NULL").fetchall():
        out.setdefault(table, {})[ordinal] = pk
    return out


def _max_ids(conn: Any, plans: list[planning.TablePlan]) -> dict[str, int]:
    out = {}
    for p in plans:
        pk = next(k.columns for k in p.table.constraints if k.kind == "primary_key")
        typ = next(c.type for c in p.table.columns if c.name == pk[0])
        if len(pk) == 1 and gen.base_type(typ) in gen.INT_TYPES:
            out[p.name] = int(conn.execute(f"SELECT coalesce(max({_ident(pk[0])}), 0) FROM {_ident(p.name)}")
                              .fetchone()[0])
    return out


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _write(conn: Any, rows: TableRows, recorded: dict[int, dict[str, Any]]) -> int:
    """COPY the rows not seeded before, and record them."""
    new = [i for i in range(rows.count) if i not in recorded]
    if not new:
        return 0
    cols = ", ".join(_ident(c) for c in rows.columns)
    with conn.cursor() as cur:
        with cur.copy(f"COPY {_ident(rows.plan.name)} ({cols}) FROM STDIN") as copy:
            for row in rows.rows(new):
                copy.write_row(row)
        with cur.copy("COPY framework_seeds (table_name, pk, ordinal) FROM STDIN") as copy:
            pk = rows.pk_columns
            ids = rows.data[pk[0]]
            if len(pk) == 1 and all(type(ids[i]) is int for i in new):
                # the common integer key, formatted directly (json.dumps per row was a third of the time)
                name, key = rows.plan.name.replace("\\", "\\\\"), json.dumps(pk[0])
                copy.write("".join(f"{name}\t{{{key}: {ids[i]}}}\t{i}\n" for i in new))
            else:
                for i in new:
                    copy.write_row((rows.plan.name, json.dumps(rows.pk(i), default=_json_default), i))
    for c in rows.plan.table.columns:  # serial and identity columns continue after the seeded ids
        if c.identity or (c.default or "").startswith("nextval("):
            conn.execute(f"SELECT setval(pg_get_serial_sequence(%s, %s), m) FROM (SELECT max({_ident(c.name)}) m "
                         f"FROM {_ident(rows.plan.name)}) s WHERE m IS NOT NULL", (rows.plan.name, c.name))
    return len(new)


def _custom(conn: Any, root: Path, tables: list[Table]) -> list[str]:
    directory = root / CUSTOM_DIR
    if not directory.is_dir():
        return []
    done = {f for (f,) in conn.execute("SELECT file FROM framework_seed_files").fetchall()}
    applied = []
    for path in sorted(directory.glob("*.sql")):
        name = path.name
        if name in done:
            continue
        text = path.read_text(encoding="utf-8")
        import psycopg

        try:
            if text.strip():
                conn.execute(text)
        except psycopg.Error as exc:
            raise DatabaseAuthoringError(f"{CUSTOM_DIR / name}: {exc.diag.message_primary or exc}",
                                         hint="nothing was seeded (one transaction)") from exc
        conn.execute("INSERT INTO framework_seed_files (file, sha256) VALUES (%s, %s)",
                     (name, hashlib.sha256(text.encode()).hexdigest()))
        applied.append(name)
    if applied:
        for t in tables:  # rows the custom files created in this transaction are seeded rows too
            conn.execute(f"INSERT INTO framework_seeds (table_name, pk) SELECT %s, {_pk_json(t)} FROM "
                         f"{_ident(t.qualified)} WHERE xmin = pg_current_xact_id()::xid ON CONFLICT DO NOTHING",
                         (t.qualified,))
    return applied


def _counts(conn: Any, tables: list[Table]) -> list[TableCount]:
    seeded = dict(conn.execute("SELECT table_name, count(*) FROM framework_seeds GROUP BY 1").fetchall()) \
        if _bookkeeping_exists(conn) else {}
    return [TableCount(table=t.qualified, seeded=int(seeded.get(t.qualified, 0)),
                       rows=int(conn.execute(f"SELECT count(*) FROM {_ident(t.qualified)}").fetchone()[0]))
            for t in tables]


def seed_in(conn: Any, root: Path, config: dict[str, Any], anchor: datetime | None,
            report: Reporter | None = None) -> SeedResult:
    """Apply inside the caller's transaction (apply and reset share it); `report` hears each table."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
    for ddl in BOOKKEEPING_DDL:
        conn.execute(ddl)
    vocab: Vocab = load_vocab(root)
    tables = read_schema(conn)
    selected = _selected(config)
    plans, unknown = planning.build(tables, selected, vocab.table_rows, vocab.rows)
    if unknown:
        raise DatabaseAuthoringError(f"database.seed.tables names tables that are not seedable here: "
                                     f"{', '.join(unknown)}", hint="seedable tables have a primary key; check "
                                     "the names against `framework db introspect`")
    recorded = _recorded(conn)
    rows, warnings = synthesize(plans, vocab, _enums(conn), recorded, _max_ids(conn, plans),
                                anchor or gen.today_anchor())
    inserted = {}
    for p in tracked(report, "seed", plans, lambda p: p.name):
        count = _write(conn, rows[p.name], recorded.get(p.name, {}))
        if count:
            inserted[p.name] = count
    custom = _custom(conn, root, planning.seedable(tables))
    planned = sum(r.count for r in rows.values())
    has_custom = (root / CUSTOM_DIR).is_dir() and any((root / CUSTOM_DIR).glob("*.sql"))
    if planned == 0 and not has_custom and planning.seedable(tables):
        raise Refused("seeding nothing, but the schema has seedable tables: "
                      f"{', '.join(t.qualified for t in planning.seedable(tables))}",
                      hint="list them in database.seed.tables, set rows in db/seeds/vocab.yaml, "
                           "or add db/seeds/custom/*.sql")
    return SeedResult(database="", inserted=inserted, custom_applied=custom, warnings=vocab.warnings + warnings,
                      tables=_counts(conn, planning.seedable(read_schema(conn))))


def _failed(exc: Any) -> DatabaseAuthoringError:
    """A row the database refused (a CHECK, a unique index ...): named, nothing written."""
    diag = exc.diag
    where = ", ".join(f"{k} {v}" for k, v in (("table", diag.table_name), ("column", diag.column_name),
                                               ("constraint", diag.constraint_name)) if v)
    return DatabaseAuthoringError(
        f"seeding failed: {diag.message_primary or exc}" + (f" ({where})" if where else ""),
        hint="give the column values that satisfy it in db/seeds/vocab.yaml (columns: {<table>.<column>: "
             "{values: [...]}}); nothing was written (one transaction)")


def apply(dsn: Dsn, root: Path, config: dict[str, Any], anchor: datetime | None = None,
          report: Reporter | None = None) -> SeedResult:
    import psycopg

    with connect(dsn, autocommit=False) as conn:
        try:
            result = seed_in(conn, root, config, anchor, report)
        except psycopg.Error as exc:
            raise _failed(exc) from exc
        conn.commit()
    result.database = dsn.redacted
    return result


def reset(dsn: Dsn, root: Path, config: dict[str, Any], anchor: datetime | None = None) -> SeedResult:
    """Delete the seeded rows child-first, forget the custom files, re-seed: one transaction."""
    import psycopg

    try:
        return _reset(dsn, root, config, anchor)
    except psycopg.Error as exc:
        raise _failed(exc) from exc


def _reset(dsn: Dsn, root: Path, config: dict[str, Any], anchor: datetime | None) -> SeedResult:
    with connect(dsn, autocommit=False) as conn:
        deleted: dict[str, int] = {}
        if _bookkeeping_exists(conn):
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            tables = planning.seedable(read_schema(conn))
            seeded = {t for (t,) in conn.execute("SELECT DISTINCT table_name FROM framework_seeds").fetchall()}
            for t in reversed(planning.order(tables)):
                if t.qualified not in seeded:
                    continue
                if planning.marker(t.comment, "append-only"):
                    raise Refused(f"{t.qualified} is framework:append-only: its seeded rows are never deleted",
                                  hint="recreate the database instead: framework db reset")
                cur = conn.execute(f"DELETE FROM {_ident(t.qualified)} WHERE {_pk_json(t)} IN "
                                   "(SELECT pk FROM framework_seeds WHERE table_name = %s)", (t.qualified,))
                deleted[t.qualified] = cur.rowcount
            conn.execute("DELETE FROM framework_seeds")
            conn.execute("DELETE FROM framework_seed_files")
        result = seed_in(conn, root, config, anchor)
        conn.commit()
    result.database = dsn.redacted
    result.deleted = deleted
    return result


def status(dsn: Dsn) -> SeedStatus:
    with connect(dsn) as conn:
        tables = planning.seedable(read_schema(conn))
        custom = [f for (f,) in conn.execute("SELECT file FROM framework_seed_files ORDER BY 1").fetchall()] \
            if _bookkeeping_exists(conn) else []
        return SeedStatus(database=dsn.redacted, tables=_counts(conn, tables), custom_applied=custom)


def all_empty(dsn: Dsn) -> bool:
    """Every seedable table is empty (`env up` seeds a first-boot database)."""
    with connect(dsn) as conn:
        return all(c.rows == 0 for c in _counts(conn, planning.seedable(read_schema(conn))))
