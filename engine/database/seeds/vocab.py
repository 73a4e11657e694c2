"""`db/seeds/vocab.yaml`: validated; an invalid value is skipped with a warning naming file and line.

    rows: 10                      # rows per table (default 10)
    tables:
      users: {rows: 25}
    columns:
      status: {values: [active, paused]}        # the column `status` of any table
      users.email: {faker: email}               # a Faker provider
      orders.placed_at: {from: -30d, to: now}   # relative timestamps: a range ...
      orders.due_on: {offset: 7d}               # ... or an offset from now
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

VOCAB_FILE = Path("db") / "seeds" / "vocab.yaml"
DEFAULT_ROWS = 10
_RELATIVE = re.compile(r"^(?P<sign>[+-])?(?P<n>\d+)(?P<unit>[smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
COLUMN_KEYS = {"values", "faker", "from", "to", "offset"}


@dataclass
class ColumnVocab:
    key: str  # "column" or "table.column"
    line: int
    values: list[tuple[Any, int]] | None = None  # (value, line)
    faker: str | None = None
    start: timedelta | None = None
    end: timedelta | None = None
    offset: timedelta | None = None


@dataclass
class Vocab:
    path: Path | None
    rows: int = DEFAULT_ROWS
    table_rows: dict[str, int] = field(default_factory=dict)
    columns: dict[str, ColumnVocab] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def rows_for(self, table: str) -> int:
        return self.table_rows.get(table, self.rows)

    def column(self, table: str, column: str) -> ColumnVocab | None:
        return self.columns.get(f"{table}.{column}") or self.columns.get(column)


def relative(text: Any) -> timedelta | None:
    """`now`, `-30d`, `+2h`, `7d` -> a delta from now; None when not one."""
    value = str(text).strip().lower()
    if value == "now":
        return timedelta(0)
    m = _RELATIVE.match(value)
    if not m:
        return None
    delta = timedelta(**{_UNITS[m["unit"]]: int(m["n"])})
    return -delta if m["sign"] == "-" else delta


def _scalar(node: Any) -> Any:
    import yaml

    return yaml.safe_load(yaml.serialize(node))


def load(root: Path) -> Vocab:
    import yaml

    path = root / VOCAB_FILE
    if not path.is_file():
        return Vocab(path=None)
    vocab = Vocab(path=path)
    shown = str(VOCAB_FILE)

    def warn(node: Any, message: str) -> None:
        vocab.warnings.append(f"{shown}:{node.start_mark.line + 1}: {message}; skipped")

    try:
        doc = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        vocab.warnings.append(f"{shown}:{mark.line + 1 if mark else 1}: not valid YAML; the whole file skipped")
        return vocab
    if doc is None:
        return vocab
    if not isinstance(doc, yaml.MappingNode):
        warn(doc, "expected a mapping (rows, tables, columns)")
        return vocab
    for key_node, value_node in doc.value:
        key = key_node.value
        if key == "rows":
            n = _scalar(value_node)
            if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
                vocab.rows = n
            else:
                warn(value_node, f"rows must be a non-negative integer, not {n!r}")
        elif key == "tables" and isinstance(value_node, yaml.MappingNode):
            for tnode, tval in value_node.value:
                spec = _scalar(tval)
                rows = spec.get("rows") if isinstance(spec, dict) else None
                if isinstance(rows, int) and not isinstance(rows, bool) and rows >= 0:
                    vocab.table_rows[tnode.value] = rows
                else:
                    warn(tval, f"tables.{tnode.value}: expected {{rows: <non-negative integer>}}")
        elif key == "columns" and isinstance(value_node, yaml.MappingNode):
            for cnode, cval in value_node.value:
                col = _column(cnode.value, cnode, cval, warn)
                if col is not None:
                    vocab.columns[cnode.value] = col
        else:
            warn(key_node, f"unknown or malformed key {key!r} (expected rows, tables, columns)")
    return vocab


def _column(name: str, key_node: Any, node: Any, warn: Any) -> ColumnVocab | None:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        warn(node, f"columns.{name}: expected a mapping (values, faker, from/to, offset)")
        return None
    col = ColumnVocab(key=name, line=key_node.start_mark.line + 1)
    for k, v in node.value:
        if k.value not in COLUMN_KEYS:
            warn(k, f"columns.{name}: unknown key {k.value!r}")
        elif k.value == "values":
            if isinstance(v, yaml.SequenceNode) and v.value:
                col.values = [(_scalar(item), item.start_mark.line + 1) for item in v.value]
            else:
                warn(v, f"columns.{name}.values: expected a non-empty list")
        elif k.value == "faker":
            col.faker = str(_scalar(v))
        else:
            delta = relative(_scalar(v))
            if delta is None:
                warn(v, f"columns.{name}.{k.value}: {_scalar(v)!r} is not `now` or an offset like -30d, 2h")
            else:
                setattr(col, {"from": "start", "to": "end", "offset": "offset"}[k.value], delta)
    if col.values is None and col.faker is None and col.start is None and col.end is None and col.offset is None:
        return None
    return col
