"""`framework project shapes` (docs/reference-project.md#project-shapes): every RPC, message and enum of the
protos, every table the migrations create, every handler and every hook of the Go sources, with its file
and line. Nothing is found by regular expressions: the protos through buf's descriptor (source info),
the migrations through the SQL parser, the Go through go/ast (engine/inspection/sources.py, cached per
file by content hash).

A hook is a function of a user-owned (scaffold-once) file that generated code calls by name: a webhook's
`Handle` (internal/webhooks/<name>/, called by the generated receiver) and a worker's `Run` and `Tick`
(internal/workers/<name>/, run by the generated cmd/<name>/main.go).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from engine.errors import UsageError
from engine.project import Project

KINDS = ("rpc", "message", "enum", "table", "handler", "hook")
HANDLERS_DIR = "internal/handlers/"
# (directory under internal/, function names generated code calls): what a hook is.
HOOKS = (("internal/webhooks/", ("Handle",)), ("internal/workers/", ("Run", "Tick")))


class Shape(BaseModel):
    kind: str  # rpc | message | enum | table | handler | hook
    name: str
    file: str  # relative to the project root
    line: int
    detail: str = ""


class ShapesResult(BaseModel):
    shapes: list[Shape] = []
    kinds: list[str] = list(KINDS)
    grep: str | None = None


def parse_kinds(values: list[str] | None) -> list[str]:
    """`--kind rpc,table` (comma-separated or repeated); unknown kinds are a usage error (exit 2)."""
    kinds = [k.strip() for v in values or [] for k in v.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise UsageError(f"--kind {', '.join(bad)}: not a kind of shape", hint=f"kinds: {', '.join(KINDS)}")
    return [k for k in KINDS if k in kinds] or list(KINDS)


def compile_grep(pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"--grep {pattern!r} is not a valid regular expression: {exc}",
                         hint="Python regular expression syntax; quote it for the shell") from None


def project_shapes(project: Project, *, grep: str | None = None, kinds: list[str] | None = None) -> ShapesResult:
    """The shapes of the project, sorted by kind then file and line; `grep` searches name and detail."""
    from engine.authoring.config import load
    from engine.inspection.sources import SourceCache

    wanted = parse_kinds(kinds)
    pattern = compile_grep(grep)
    cfg = load(project)
    cache = SourceCache(project.root)
    shapes: list[Shape] = []
    if {"rpc", "message", "enum", "handler"} & set(wanted):
        shapes += _proto_shapes(project, cache, cfg.proto_dir, wanted)
    if "table" in wanted:
        from engine.inspection.sources import tables

        shapes += [Shape(kind="table", name=t["name"], file=t["file"], line=t["line"],
                         detail=f"{t['columns']} columns") for t in tables(project, cache)]
    if {"handler", "hook"} & set(wanted):
        from engine.inspection.sources import go_files

        tops = tuple(d.rstrip("/") for d in (HANDLERS_DIR, *(prefix for prefix, _ in HOOKS)))
        shapes += _go_shapes(go_files(project, cache, tops), _procedures(project, cache, cfg.proto_dir), wanted)
    cache.save()
    if pattern is not None:
        shapes = [s for s in shapes if pattern.search(s.name) or pattern.search(s.detail)]
    order = {k: i for i, k in enumerate(KINDS)}
    shapes.sort(key=lambda s: (order[s.kind], s.file, s.line, s.name))
    return ShapesResult(shapes=shapes, kinds=wanted, grep=grep)


def _proto_shapes(project: Project, cache: Any, proto_dir: str, wanted: list[str]) -> list[Shape]:
    from engine.inspection.sources import descriptor, own_proto

    desc = descriptor(project, cache, proto_dir)
    if desc is None:
        return []
    local = {f["name"] for f in desc["files"] if f["local"] and own_proto(f["name"])}
    out: list[Shape] = []
    if "rpc" in wanted:
        for svc in desc["services"]:
            if svc["file"] not in local:
                continue
            full = f"{svc['package']}.{svc['name']}" if svc["package"] else svc["name"]
            for m in svc["methods"]:
                stream = ("bidi" if m["client_streaming"] and m["server_streaming"] else "client"
                          if m["client_streaming"] else "server" if m["server_streaming"] else "")
                detail = f"/{full}/{m['name']}: {m['input']} -> {m['output']}" + (f" ({stream} stream)"
                                                                                  if stream else "")
                out.append(Shape(kind="rpc", name=f"{full}.{m['name']}", file=f"{proto_dir}/{svc['file']}",
                                 line=m["line"], detail=detail))
    if "message" in wanted:
        out += [Shape(kind="message", name=m["full_name"], file=f"{proto_dir}/{m['file']}", line=m["line"],
                      detail=("entity, " if m["entity"] else "") + f"{len(m['fields'])} fields")
                for m in desc["messages"] if m["file"] in local and not m["map_entry"]]
    if "enum" in wanted:
        out += [Shape(kind="enum", name=e["full_name"], file=f"{proto_dir}/{e['file']}", line=e["line"])
                for e in desc.get("enum_types", []) if e["file"] in local]
    return out


def _procedures(project: Project, cache: Any, proto_dir: str) -> dict[tuple[str, str], str]:
    """(handler directory, method) -> the RPC's procedure, for every RPC of the protos."""
    from engine.authoring import naming
    from engine.inspection.sources import descriptor

    desc = descriptor(project, cache, proto_dir)
    out: dict[tuple[str, str], str] = {}
    for svc in (desc or {}).get("services", []):
        full = f"{svc['package']}.{svc['name']}" if svc["package"] else svc["name"]
        for m in svc["methods"]:
            out[(f"{HANDLERS_DIR}{naming.service_key(svc['name'])}", m["name"])] = f"/{full}/{m['name']}"
    return out


def _go_shapes(files: dict[str, dict[str, Any]], procedures: dict[tuple[str, str], str],
               wanted: list[str]) -> list[Shape]:
    out: list[Shape] = []
    for rel, info in files.items():
        directory = rel.rsplit("/", 1)[0]
        if "handler" in wanted and rel.startswith(HANDLERS_DIR):
            for fn in info["funcs"]:
                if fn.get("receiver") != "Handler" or not fn["name"][:1].isupper():
                    continue
                procedure = procedures.get((directory, fn["name"]))
                out.append(Shape(kind="handler", name=f"{directory.removeprefix(HANDLERS_DIR)}.{fn['name']}",
                                 file=rel, line=fn["line"],
                                 detail=procedure or "a method of Handler that no RPC of the protos names"))
        if "hook" in wanted:
            for prefix, names in HOOKS:
                if not rel.startswith(prefix) or directory.count("/") != prefix.count("/"):
                    continue
                for fn in info["funcs"]:
                    if not fn.get("receiver") and fn["name"] in names:
                        what = "webhook" if "webhooks" in prefix else "worker"
                        out.append(Shape(kind="hook", name=f"{directory.removeprefix(prefix)}.{fn['name']}",
                                         file=rel, line=fn["line"], detail=f"{what} hook"))
    return out
