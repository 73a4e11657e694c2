"""Synthesized rows: a deterministic function of the plan, the vocabulary and the anchor time.

Foreign keys pick parents by a mixed radix over the parents' row counts (distinct parent tuples
for join tables), derived foreign keys pick among parents sharing the source's ancestor row.
Integer primary keys are numbered after the table's highest id (1.. on an empty table); rows
seeded earlier keep their recorded keys, so a second apply reproduces the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engine.database.errors import Refused
from engine.database.seeds import values as gen
from engine.database.seeds.plan import TablePlan
from engine.database.seeds.vocab import Vocab


@dataclass
class TableRows:
    """Column-oriented: `data[column][ordinal]` (generated a column at a time)."""

    plan: TablePlan
    columns: list[str]
    count: int
    data: dict[str, list[Any]]
    pk_columns: list[str]
    parent_ord: dict[str, list[int | None]] = field(default_factory=dict)

    def value(self, ordinal: int, column: str) -> Any:
        return self.data[column][ordinal]

    def pk(self, ordinal: int) -> dict[str, Any]:
        return {c: self.data[c][ordinal] for c in self.pk_columns}

    def rows(self, ordinals: list[int]) -> list[tuple[Any, ...]]:
        cols = [self.data[c] for c in self.columns]
        return [tuple(col[i] for col in cols) for i in ordinals]


def _unique_columns(plan: TablePlan) -> set[str]:
    return {k.columns[0] for k in plan.table.constraints if k.kind in ("unique", "primary_key") and len(k.columns) == 1}


def _vocab_values(plan: TablePlan, column: Any, vocab: Vocab, enum_labels: list[str] | None,
                  warnings: list[str]) -> list[Any] | None:
    spec = vocab.column(plan.table.name, column.name)
    if spec is None or not spec.values:
        return None
    shown = str(vocab.path.name) if vocab.path else "vocab.yaml"
    good = []
    for value, line in spec.values:
        try:
            good.append(gen.coerce(value, column.type, enum_labels))
        except ValueError as exc:
            warnings.append(f"db/seeds/{shown}:{line}: {plan.table.name}.{column.name}: {value!r} {exc}; skipped")
    return good or None


def synthesize(plans: list[TablePlan], vocab: Vocab, enums: dict[str, list[str]],
               recorded: dict[str, dict[int, dict[str, Any]]], max_ids: dict[str, int], anchor: datetime,
               ) -> tuple[dict[str, TableRows], list[str]]:
    warnings: list[str] = []
    out: dict[str, TableRows] = {}
    for plan in plans:
        out[plan.name] = _table(plan, out, vocab, enums, recorded.get(plan.name, {}), max_ids.get(plan.name, 0),
                                anchor, warnings)
    return out, warnings


def _table(plan: TablePlan, done: dict[str, TableRows], vocab: Vocab, enums: dict[str, list[str]],
           recorded: dict[int, dict[str, Any]], max_id: int, anchor: datetime, warnings: list[str]) -> TableRows:
    table = plan.table
    columns = [c for c in table.columns if not c.generated]
    pk_cols = next(k.columns for k in table.constraints if k.kind == "primary_key")
    fk_of = {col: fk for fk in plan.fks for col in fk.columns}
    unique = _unique_columns(plan)
    n = plan.rows
    own_fks = [fk for fk in plan.fks if fk.references_table != plan.name and fk.name not in plan.derived]
    if pk_cols and all(c in fk_of for c in pk_cols):
        cap = 1
        for fk in {fk_of[c].name: fk_of[c] for c in pk_cols}.values():
            parent = done.get(fk.references_table)
            cap *= parent.count if parent else 0
        n = min(n, cap)
    gens: dict[str, gen.Generator] = {}
    int_pk = len(pk_cols) == 1 and gen.base_type(next(c.type for c in columns if c.name == pk_cols[0])) in gen.INT_TYPES
    for c in columns:
        if c.name in fk_of or (int_pk and c.name == pk_cols[0]):
            continue
        labels = enums.get(c.type)
        try:
            gens[c.name] = gen.generator(table.name, c.name, c.type, unique=c.name in unique, enum_labels=labels,
                                         vocab=vocab.column(table.name, c.name),
                                         valid_values=_vocab_values(plan, c, vocab, labels, warnings), anchor=anchor)
        except gen.Unsupported:
            if not c.nullable:
                raise Refused(f"seeds cannot synthesize {table.qualified}.{c.name} of type {c.type}",
                              hint=f"give it values in db/seeds/vocab.yaml (columns: {{{table.name}.{c.name}: "
                                   "{values: [...]}}), or seed the table from db/seeds/custom/") from None
            gens[c.name] = lambda i: None
    names = [c.name for c in columns]
    data: dict[str, list[Any]] = {name: [None] * n for name in names}
    for name, g in gens.items():
        data[name] = [g(i) for i in range(n)]
    if int_pk:
        ids, next_id = [], max_id
        for i in range(n):
            if i in recorded:
                ids.append(recorded[i][pk_cols[0]])
            else:
                next_id += 1
                ids.append(next_id)
        data[pk_cols[0]] = ids
    result = TableRows(plan, names, n, data, list(pk_cols))
    _foreign_keys(result, own_fks, done, n)
    return result


def _set(result: TableRows, fk: Any, ordinal: int, parent: TableRows | None, j: int | None) -> None:
    for col, ref in zip(fk.columns, fk.references_columns, strict=True):
        result.data[col][ordinal] = None if parent is None or j is None else parent.data[ref][j]


def _nullable(result: TableRows, fk: Any) -> bool:
    return all(c.nullable for c in result.plan.table.columns if c.name in fk.columns)


def _missing_parent(result: TableRows, fk: Any) -> Refused:
    return Refused(f"{result.plan.name}.{', '.join(fk.columns)} references {fk.references_table}, which has no "
                   "seeded rows", hint=f"add {fk.references_table} to database.seed.tables (framework.yaml), or "
                                       "seed the child from db/seeds/custom/")


def _foreign_keys(result: TableRows, own: list[Any], done: dict[str, TableRows], n: int) -> None:
    plan = result.plan
    radix = 1
    for fk in own:
        parent = done.get(fk.references_table)
        count = parent.count if parent else 0
        if count == 0 and not _nullable(result, fk) and n:
            raise _missing_parent(result, fk)
        ords: list[int | None] = [((i // radix) % count) if count else None for i in range(n)]
        radix *= max(count, 1)
        result.parent_ord[fk.name] = ords
        for i, j in enumerate(ords):
            _set(result, fk, i, parent, j)
    for fk in plan.fks:
        if fk.references_table == plan.name:  # self-reference: an earlier row (a tree), row 0 its own root
            ords = [None if i == 0 and _nullable(result, fk) else (i - 1) // 2 if i else 0 for i in range(n)]
            result.parent_ord[fk.name] = ords
            for i, j in enumerate(ords):
                _set(result, fk, i, result, j)
    for name, d in plan.derived.items():
        parent = done.get(d.fk.references_table)
        source_parent = done.get(d.source.references_table)
        ords = []
        for i in range(n):
            js = result.parent_ord.get(d.source.name, [None] * n)[i]
            key = _ancestor(source_parent, js, d.ancestor, done)
            matches = [k for k in range(parent.count if parent else 0)
                       if key is not None and _ancestor(parent, k, d.ancestor, done) == key]
            j = matches[i % len(matches)] if matches else None
            if j is None and not _nullable(result, d.fk):
                raise Refused(f"{plan.name}.{d.fk.columns[0]} is derived from {d.source.columns[0]}, but no "
                              f"{d.fk.references_table} row shares its {d.ancestor}",
                              hint=f"seed more {d.fk.references_table} rows (db/seeds/vocab.yaml tables.rows)")
            ords.append(j)
            _set(result, d.fk, i, parent, j)
        result.parent_ord[name] = ords


def _ancestor(rows: TableRows | None, ordinal: int | None, ancestor: str, done: dict[str, TableRows]) -> Any:
    """The ordinal of `ancestor`'s row above row `ordinal` of `rows` (None when unknown)."""
    if rows is None or ordinal is None:
        return None
    if rows.plan.name == ancestor:
        return ordinal
    from engine.database.seeds.plan import ancestors

    by_name = {name: r.plan.table for name, r in done.items()}
    for fk in rows.plan.fks:
        if fk.references_table != rows.plan.name and ancestor in ancestors(fk.references_table, by_name):
            ords = rows.parent_ord.get(fk.name)
            if ords is not None:
                return _ancestor(done.get(fk.references_table), ords[ordinal], ancestor, done)
    return None
