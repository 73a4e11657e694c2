"""What to seed, in which order, and how each foreign key picks its parent (docs/reference-db.md#seeds).

The order comes from the live schema's foreign keys (parents first). An entity reachable by two
parent paths (its foreign keys lead to a common ancestor) is refused until a `framework:ref`
column comment decides it: `derived-from=<column>` (pick the parent consistent with that
column's), `authoritative` (the others follow this one) or `independent` (no agreement needed).
A `framework:owner` foreign key counts as authoritative.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.database.errors import Refused
from engine.database.introspect import ForeignKey, Table

BOOKKEEPING = ("framework_seeds", "framework_seed_files")
_REF = re.compile(r"framework:ref[\s=:(]+(derived-from=(?P<col>[A-Za-z_][\w]*)|authoritative|independent)")


def marker(comment: str | None, name: str) -> bool:
    return bool(comment) and re.search(rf"framework:{re.escape(name)}\b", comment or "") is not None


def ref_marker(comment: str | None) -> tuple[str, str | None] | None:
    m = _REF.search(comment or "")
    if not m:
        return None
    if m["col"]:
        return "derived-from", m["col"]
    return m[1], None


@dataclass
class Derivation:
    """`fk` picks its parent consistent with `source`'s parent, through common ancestor `ancestor`."""

    fk: ForeignKey
    source: ForeignKey
    ancestor: str


@dataclass
class TablePlan:
    table: Table
    rows: int
    fks: list[ForeignKey]
    derived: dict[str, Derivation] = field(default_factory=dict)  # fk name -> derivation

    @property
    def name(self) -> str:
        return self.table.qualified


def seedable(tables: list[Table]) -> list[Table]:
    """Tables with a primary key (seeded rows must be identifiable), minus our bookkeeping."""
    return [t for t in tables if t.name not in BOOKKEEPING
            and any(c.kind == "primary_key" for c in t.constraints)]


def order(tables: list[Table]) -> list[Table]:
    """Parents before children (Kahn); self-references ignored; a cycle is refused."""
    by_name = {t.qualified: t for t in tables}
    deps = {t.qualified: {fk.references_table for fk in t.foreign_keys
                          if fk.references_table != t.qualified and fk.references_table in by_name}
            for t in tables}
    out: list[Table] = []
    ready = sorted(n for n, d in deps.items() if not d)
    while ready:
        name = ready.pop(0)
        out.append(by_name[name])
        for other, d in deps.items():
            if name in d:
                d.discard(name)
                if not d and other not in [t.qualified for t in out] and other not in ready:
                    ready.append(other)
                    ready.sort()
    if len(out) != len(tables):
        cycle = sorted(n for n in deps if n not in [t.qualified for t in out])
        raise Refused(f"the foreign keys of {', '.join(cycle)} form a cycle: seeds cannot order them",
                      hint="make one foreign key of the cycle nullable and seed it from db/seeds/custom/")
    return out


def ancestors(name: str, by_name: dict[str, Table], seen: frozenset[str] = frozenset()) -> list[str]:
    """`name` and every table reachable through foreign keys, nearest first."""
    if name in seen or name not in by_name:
        return [name] if name not in seen else []
    out = [name]
    for fk in by_name[name].foreign_keys:
        for a in ancestors(fk.references_table, by_name, seen | {name}):
            if a not in out:
                out.append(a)
    return out


def _path(fk: ForeignKey, ancestor: str, by_name: dict[str, Table]) -> str:
    chain = [fk.references_table]
    while chain[-1] != ancestor:
        table = by_name[chain[-1]]
        nxt = next(f.references_table for f in table.foreign_keys
                   if ancestor in ancestors(f.references_table, by_name, frozenset({table.qualified})))
        chain.append(nxt)
    return " -> ".join(chain)


def resolve_paths(table: Table, by_name: dict[str, Table]) -> dict[str, Derivation]:
    """Two-parent-paths check for one table: derivations, or a refusal naming both paths."""
    comments = {c.name: c.comment for c in table.columns}
    fks = [fk for fk in table.foreign_keys if fk.references_table != table.qualified]
    derived: dict[str, Derivation] = {}
    for i, a in enumerate(fks):
        for b in fks[i + 1:]:
            common = [x for x in ancestors(a.references_table, by_name)
                      if x in ancestors(b.references_table, by_name)]
            if not common:
                continue
            ma, mb = ref_marker(comments.get(a.columns[0])), ref_marker(comments.get(b.columns[0]))
            if (ma and ma[0] == "independent") or (mb and mb[0] == "independent"):
                continue
            if ma == ("derived-from", b.columns[0]) or (mb and mb[0] == "authoritative") or \
                    (not ma and marker(comments.get(b.columns[0]), "owner")):
                derived[a.name] = Derivation(a, b, common[0])
            elif mb == ("derived-from", a.columns[0]) or (ma and ma[0] == "authoritative") or \
                    (not mb and marker(comments.get(a.columns[0]), "owner")):
                derived[b.name] = Derivation(b, a, common[0])
            else:
                col = b.columns[0]
                raise Refused(
                    f"{table.qualified} is reachable from {common[0]} by two parent paths: "
                    f"{table.qualified}.{a.columns[0]} -> {_path(a, common[0], by_name)} and "
                    f"{table.qualified}.{col} -> {_path(b, common[0], by_name)}; seeds cannot tell whether "
                    "the two must agree",
                    hint=f"declare it: COMMENT ON COLUMN {table.qualified}.{col} IS "
                         f"'framework:ref derived-from={a.columns[0]}' (or 'framework:ref authoritative' / "
                         "'framework:ref independent'), in a new migration")
    return derived


def build(tables: list[Table], selected: list[str] | None, rows_for: dict[str, int], default_rows: int
          ) -> tuple[list[TablePlan], list[str]]:
    """(plans in insertion order, unknown names in `database.seed.tables`)."""
    candidates = seedable(tables)
    names = {t.qualified for t in candidates} | {t.name for t in candidates}
    unknown = [n for n in (selected or []) if n not in names]
    chosen = candidates if selected is None else [t for t in candidates
                                                  if t.qualified in selected or t.name in selected]
    by_name = {t.qualified: t for t in tables}
    plans = []
    for t in order(chosen):
        plans.append(TablePlan(t, rows_for.get(t.name, rows_for.get(t.qualified, default_rows)),
                               list(t.foreign_keys), resolve_paths(t, by_name)))
    return plans, unknown
