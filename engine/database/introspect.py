"""`db introspect`: tables, columns, types, constraints, indexes, foreign keys (docs/reference-db.md#commands).

Read from the catalogs (pg_class, pg_attribute, pg_constraint, pg_index) with PostgreSQL's own
renderers (format_type, pg_get_constraintdef, pg_get_indexdef), so two databases built the same
way introspect identically: `db squash` uses that to prove a baseline equal to its sources.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from engine.database.dsn import Dsn, connect
from engine.database.runner import TABLE as MIGRATIONS_TABLE

CONSTRAINT_KINDS = {"p": "primary_key", "u": "unique", "c": "check", "f": "foreign_key", "x": "exclusion"}
FK_ACTIONS = {"a": "no action", "r": "restrict", "c": "cascade", "n": "set null", "d": "set default"}


class Column(BaseModel):
    name: str
    type: str
    nullable: bool
    default: str | None = None
    identity: str | None = None  # "always" or "by default"
    generated: str | None = None
    comment: str | None = None


class ForeignKey(BaseModel):
    name: str
    columns: list[str]
    references_table: str
    references_columns: list[str]
    on_delete: str
    on_update: str


class Constraint(BaseModel):
    name: str
    kind: str
    columns: list[str]
    definition: str


class Index(BaseModel):
    name: str
    unique: bool
    primary: bool
    definition: str


class Table(BaseModel):
    schema_name: str
    name: str
    comment: str | None = None
    columns: list[Column]
    constraints: list[Constraint]
    indexes: list[Index]
    foreign_keys: list[ForeignKey]

    @property
    def qualified(self) -> str:
        return self.name if self.schema_name == "public" else f"{self.schema_name}.{self.name}"


class Schema(BaseModel):
    database: str
    tables: list[Table]

    def table(self, name: str) -> Table | None:
        for t in self.tables:
            if t.qualified == name or t.name == name:
                return t
        return None


def _qualify(schema: str, name: str) -> str:
    return name if schema == "public" else f"{schema}.{name}"


def read_schema(conn: Any, *, include_migrations_table: bool = False) -> list[Table]:
    rows = conn.execute(
        "SELECT c.oid, n.nspname, c.relname, obj_description(c.oid, 'pg_class') FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p') "
        "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%%' "
        "AND n.nspname NOT LIKE 'pg\\_temp%%' ORDER BY n.nspname, c.relname").fetchall()
    if not include_migrations_table:
        rows = [r for r in rows if r[2] != MIGRATIONS_TABLE]
    oids = [r[0] for r in rows]
    names = {r[0]: _qualify(r[1], r[2]) for r in rows}
    columns: dict[int, list[Column]] = {o: [] for o in oids}
    attnames: dict[tuple[int, int], str] = {}
    for rel, name, typ, notnull, default, comment, identity, generated, num in conn.execute(
            "SELECT a.attrelid, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, "
            "pg_get_expr(d.adbin, d.adrelid), col_description(a.attrelid, a.attnum), a.attidentity, "
            "a.attgenerated, a.attnum FROM pg_attribute a LEFT JOIN pg_attrdef d "
            "ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
            "WHERE a.attrelid = ANY(%s::oid[]) AND a.attnum > 0 AND NOT a.attisdropped "
            "ORDER BY a.attrelid, a.attnum", (oids,)).fetchall():
        attnames[(rel, num)] = name
        columns[rel].append(Column(
            name=name, type=typ, nullable=not notnull, default=None if generated else default,
            identity={"a": "always", "d": "by default"}.get(identity or ""),
            generated=default if generated else None, comment=comment))
    constraints: dict[int, list[Constraint]] = {o: [] for o in oids}
    fks: dict[int, list[ForeignKey]] = {o: [] for o in oids}
    for rel, name, kind, definition, keys, frel, fkeys, upd, dele in conn.execute(
            "SELECT conrelid, conname, contype, pg_get_constraintdef(oid), conkey, confrelid, confkey, "
            "confupdtype, confdeltype FROM pg_constraint WHERE conrelid = ANY(%s::oid[]) "
            "AND contype IN ('p', 'u', 'c', 'f', 'x') ORDER BY conrelid, conname", (oids,)).fetchall():
        cols = [attnames.get((rel, k), str(k)) for k in keys or []]
        constraints[rel].append(Constraint(name=name, kind=CONSTRAINT_KINDS[kind], columns=cols,
                                           definition=definition))
        if kind == "f":
            target = names.get(frel) or conn.execute("SELECT %s::oid::regclass::text", (frel,)).fetchone()[0]
            fcols = [attnames.get((frel, k), str(k)) for k in fkeys or []]
            fks[rel].append(ForeignKey(name=name, columns=cols, references_table=target, references_columns=fcols,
                                       on_delete=FK_ACTIONS.get(dele, dele), on_update=FK_ACTIONS.get(upd, upd)))
    indexes: dict[int, list[Index]] = {o: [] for o in oids}
    for rel, name, definition, unique, primary in conn.execute(
            "SELECT i.indrelid, ic.relname, pg_get_indexdef(i.indexrelid), i.indisunique, i.indisprimary "
            "FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indrelid = ANY(%s::oid[]) "
            "ORDER BY i.indrelid, ic.relname", (oids,)).fetchall():
        indexes[rel].append(Index(name=name, unique=unique, primary=primary, definition=definition))
    return [Table(schema_name=r[1], name=r[2], comment=r[3], columns=columns[r[0]], constraints=constraints[r[0]],
                  indexes=indexes[r[0]], foreign_keys=fks[r[0]]) for r in rows]


def introspect(dsn: Dsn) -> Schema:
    with connect(dsn) as conn:
        database = conn.execute("SELECT current_database()").fetchone()[0]
        return Schema(database=database, tables=read_schema(conn))


def summary_lines(schema: Schema) -> list[str]:
    """One line per table: columns with types and keys (the schema context of a new migration)."""
    lines = []
    for t in schema.tables:
        pk = {c for k in t.constraints if k.kind == "primary_key" for c in k.columns}
        refs = {fk.columns[0]: f"{fk.references_table}.{fk.references_columns[0]}" for fk in t.foreign_keys
                if len(fk.columns) == 1}
        cols = []
        for c in t.columns:
            text = f"{c.name} {c.type}"
            if c.name in pk:
                text += " PK"
            elif not c.nullable:
                text += " NOT NULL"
            if c.name in refs:
                text += f" -> {refs[c.name]}"
            cols.append(text)
        lines.append(f"{t.qualified}({', '.join(cols)})")
    return lines
