"""`kcl eval <file>` (docs/reference-env.md#shape-diff-config-new): evaluate a KCL file and select values by dotted
path.

`-S a.b.0.c`: a numeric segment indexes a list; a path that does not exist is an error naming
what the document has at the point where the path broke off (exit 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.errors import EngineError, UsageError


class PathNotFound(EngineError):
    code = "path_not_found"


class EvalResult(BaseModel):
    file: str
    value: Any = None
    values: dict[str, Any] | None = None


def _describe(node: Any) -> str:
    if isinstance(node, dict):
        keys = ", ".join(sorted(map(str, node))) or "no keys"
        return f"a mapping with keys: {keys}"
    if isinstance(node, list):
        return f"a list of {len(node)} item{'s' if len(node) != 1 else ''}" + (
            f" (indexes 0..{len(node) - 1})" if node else ""
        )
    return f"the scalar {node!r}"


def select_path(doc: Any, path: str) -> Any:
    if not path or any(not seg for seg in path.split(".")):
        raise UsageError(f"-S {path!r}: expected a dotted path such as environment.workloads.0.name")
    node = doc
    walked: list[str] = []
    for seg in path.split("."):
        where = ".".join(walked) or "the document"
        if isinstance(node, dict):
            if seg not in node:
                raise PathNotFound(f"-S {path}: {where} has no key {seg!r}; it is {_describe(node)}")
            node = node[seg]
        elif isinstance(node, list):
            if not seg.lstrip("-").isdigit():
                raise PathNotFound(f"-S {path}: {where} is {_describe(node)}; {seg!r} is not a list index")
            index = int(seg)
            if not 0 <= index < len(node):
                raise PathNotFound(f"-S {path}: index {index} is out of range; {where} is {_describe(node)}")
            node = node[index]
        else:
            raise PathNotFound(f"-S {path}: {where} is {_describe(node)}, which has no {seg!r}")
        walked.append(seg)
    return node


def eval_file(
    file: Path, selectors: list[str] | None = None, options: Mapping[str, str] | None = None
) -> EvalResult:
    """Evaluate `file` (our `framework` package importable) and select `selectors` from it."""
    from engine.errors import ProjectNotFound
    from engine.kcl.evaluate import evaluate
    from engine.project import find_project

    path = file.resolve()
    if not path.is_file():
        raise EngineError(f"{file}: no such file", code="file_not_found")
    kcl_root, relative_to, cache = path.parent, Path.cwd(), False
    try:
        project = find_project(path.parent)
        if project.kcl_dir.resolve() in path.parents:
            kcl_root, relative_to, cache = project.kcl_dir, project.root, True
    except ProjectNotFound:
        pass
    doc = evaluate(path, kcl_root=kcl_root, options=options, relative_to=relative_to, use_cache=cache)
    if not selectors:
        return EvalResult(file=str(file), value=doc)
    values = {s: select_path(doc, s) for s in selectors}
    if len(selectors) == 1:
        return EvalResult(file=str(file), value=values[selectors[0]], values=values)
    return EvalResult(file=str(file), values=values)


def raw_lines(result: EvalResult) -> list[str]:
    """`--format raw`: one line per selected scalar; anything else is an error (scalars only)."""
    items = list(result.values.items()) if result.values is not None else [("the document", result.value)]
    lines = []
    for path, value in items:
        if isinstance(value, dict | list):
            raise EngineError(
                f"--format raw prints scalars only; {path} is {_describe(value)}",
                hint="select a scalar with -S, or use --format yaml/json",
                code="not_scalar",
            )
        lines.append(
            "" if value is None else ("true" if value is True else "false" if value is False else str(value))
        )
    return lines
