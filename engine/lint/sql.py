"""The SQL analyzers of `framework lint` (docs/reference-lint.md#analyzers): migrations read with pglast."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.authoring import annotation_spec as spec
from engine.authoring import naming
from engine.authoring.entities import tables
from engine.lint.model import ERROR, Finding

MIGRATIONS = Path("db") / "migrations"


def migration_safety(root: Path) -> list[Finding]:
    """`ci migration-safety` (squawk and the framework's own checks) over every migration."""
    from engine.database.safety import check, default_paths

    directory = root / MIGRATIONS
    paths = default_paths(directory) if directory.is_dir() else []
    if not paths:
        return []
    report = check(paths)
    return [Finding(analyzer="migration-safety", rule=f.rule, severity=f.level, file=_rel(root, f.file), line=f.line,
                    message=f.message, hint=f.safe_alternative) for f in report.findings]


def _rel(root: Path, file: str) -> str:
    try:
        return Path(file).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return file


def _comments(root: Path) -> list[tuple[str, int, str, str, str | None, str]]:
    """(file, line, object kind 'table'|'column', table, column, comment) of every COMMENT ON."""
    from pglast import ast, parse_sql
    from pglast.enums import ObjectType

    from engine.database.statements import split

    out: list[tuple[str, int, str, str, str | None, str]] = []
    directory = root / MIGRATIONS
    for path in sorted(directory.glob("*.up.sql")) if directory.is_dir() else []:
        text = path.read_text(encoding="utf-8")
        for stmt in split(text):
            try:
                parsed = parse_sql(stmt.code)
            except Exception:  # noqa: BLE001 - unparsable SQL is migration-safety's finding
                continue
            for raw in parsed:
                node = raw.stmt
                if not isinstance(node, ast.CommentStmt) or node.comment is None:
                    continue
                parts: tuple[Any, ...] = node.object if isinstance(node.object, tuple) else ()
                names = [str(n.sval) for n in parts if isinstance(n, ast.String)]
                if node.objtype == ObjectType.OBJECT_TABLE and names:
                    out.append((path.relative_to(root).as_posix(), stmt.line, "table", names[-1], None,
                                str(node.comment)))
                elif node.objtype == ObjectType.OBJECT_COLUMN and len(names) >= 2:
                    out.append((path.relative_to(root).as_posix(), stmt.line, "column", names[-2], names[-1],
                                str(node.comment)))
    return out


def column_markers(root: Path) -> list[Finding]:
    """framework: markers in COMMENT ON TABLE/COLUMN: known, on the right object, with a valid value, on an object
    the migrations create."""
    known = tables(root / MIGRATIONS)
    markers = spec.by_kind("column", "table")
    out: list[Finding] = []

    def add(file: str, line: int, message: str, hint: str | None = None) -> None:
        out.append(Finding(analyzer="column-markers", rule="column-markers", severity=ERROR, file=file, line=line,
                           message=message, hint=hint))

    for file, line, kind, table, column, comment in _comments(root):
        for word in comment.split():
            if not word.startswith(spec.MARKER_PREFIX):
                continue
            name, _, value = word.partition("=")
            marker = markers.get(name)
            if marker is None:
                add(file, line, f"unknown marker {name!r}", hint=f"markers: {', '.join(sorted(markers))}")
                continue
            if marker.kind != kind:
                add(file, line, f"{name} belongs on a {marker.kind} comment, not a {kind} comment")
                continue
            where = known.get(table)
            if where is None:
                add(file, line, f"{name} on table {table!r}, which no migration creates")
                continue
            if column is not None and column not in {c.name for c in where.columns}:
                add(file, line, f"{name} on column {table}.{column}, which no migration creates")
                continue
            problem = _value_problem(name, value, word, {c.name for c in where.columns})
            if problem:
                add(file, line, problem, hint=f"{name}: {marker.value or 'no value'}")
    return out


def _value_problem(name: str, value: str, word: str, columns: set[str]) -> str | None:
    if name == "framework:owner":
        return None if value and naming_ok(value) else f"{name} needs a service name: {name}=<service>"
    if name == "framework:ref":
        if value in spec.REF_VALUES:
            return None
        if value.startswith("derived-from="):
            source = value.removeprefix("derived-from=")
            return None if source in columns else f"{word}: no column {source!r} in the table"
        return f"{word}: the value is derived-from=<column>, authoritative or independent"
    return f"{name} takes no value" if value else None


def naming_ok(value: str) -> bool:
    try:
        naming.check_name(value, "service")
    except Exception:  # noqa: BLE001 - any refusal means not a service name
        return False
    return True


def db(root: Path, image: dict[str, Any] | None) -> list[Finding]:
    """Every framework:entity message has its table in the migrations (`scaffold` births it)."""
    from engine.lint.proto import entity_messages

    if image is None:
        return []
    known = tables(root / MIGRATIONS)
    out = []
    for file, line, msg in entity_messages(image):
        table = naming.table_of(msg)
        if table not in known:
            out.append(Finding(analyzer="db", rule="db", severity=ERROR, file=file, line=line,
                               message=f"entity {msg} has no table {table!r} in db/migrations",
                               hint="run `framework scaffold` to birth its create-table migration"))
    return out



def create_nullability(root: Path, image: dict[str, Any] | None) -> list[Finding]:
    """An entity's column is NOT NULL unless its proto field is `optional`: a NULL would read as the zero value."""
    from engine.lint.proto import entity_fields

    if image is None:
        return []
    known = tables(root / MIGRATIONS)
    out = []
    for file, line, msg, field, optional in entity_fields(image):
        table = known.get(naming.table_of(msg))
        column = next((c for c in table.columns if c.name == field), None) if table else None
        if table is not None and column is not None and not column.not_null and not optional:
            out.append(Finding(analyzer="create-nullability", rule="create-nullability", severity=ERROR, file=file,
                               line=line, message=f"column {table.name}.{field} is nullable but {msg}.{field} is not "
                               "optional: a NULL would read as the zero value",
                               hint="declare it NOT NULL (with a default), or `optional` in the proto"))
    return out


VOCAB = Path("db") / "seeds" / "vocab.yaml"


def fixture_drift(root: Path) -> list[Finding]:
    """db/seeds/vocab.yaml names tables and columns the migrations create (a renamed column leaves its seed
    vocabulary behind, silently unused)."""
    import yaml

    path = root / VOCAB
    if not path.is_file():
        return []
    try:
        doc = yaml.compose(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return [Finding(analyzer="fixture-drift", rule="fixture-drift", severity=ERROR, file=VOCAB.as_posix(),
                        line=(mark.line + 1) if mark else 1, message=f"vocab.yaml does not parse: {exc}")]
    known = tables(root / MIGRATIONS)
    columns = {c.name for t in known.values() for c in t.columns}
    out = []

    def add(node: Any, message: str) -> None:
        out.append(Finding(analyzer="fixture-drift", rule="fixture-drift", severity=ERROR, file=VOCAB.as_posix(),
                           line=node.start_mark.line + 1, column=node.start_mark.column + 1, message=message,
                           hint="rename or remove the entry (the migrations are the truth)"))

    for key, value in doc.value if isinstance(doc, yaml.MappingNode) else []:
        if not isinstance(value, yaml.MappingNode):
            continue
        for item, _ in value.value:
            name = str(item.value)
            if key.value == "tables" and name not in known:
                add(item, f"table {name!r} is in vocab.yaml but no migration creates it")
            elif key.value == "columns":
                table, _, column = name.rpartition(".")
                if table and (table not in known or column not in {c.name for c in known[table].columns}):
                    add(item, f"column {name!r} is in vocab.yaml but no migration creates it")
                elif not table and name not in columns:
                    add(item, f"column {name!r} is in vocab.yaml but no table has it")
    return out
