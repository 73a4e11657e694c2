"""The proto half of `framework lint` (docs/reference-lint.md#linters): `buf lint`, and the framework's proto
analyzers over the descriptor `buf build` produces (with source info: comments and lines)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.authoring import annotation_spec as spec
from engine.authoring import markers, tools
from engine.authoring.descriptor import framework_options
from engine.lint.golang import LinterCannotRun
from engine.lint.model import ERROR, WARNING, Finding

WRITE_VERBS = ("Create", "Update", "Delete", "Set", "Add", "Remove", "Put", "Patch", "Insert", "Cancel")


def _buf() -> str:
    try:
        return tools.find("buf")
    except tools.ToolMissing as exc:
        raise LinterCannotRun("buf lint: buf is not installed", hint=tools.INSTALL_HINT) from exc


def _lower_priority() -> list[str]:
    """buf runs beside the Go load of a whole lint on the same cores: at a lower priority it fills the cores the Go
    load leaves idle instead of taking turns with it (docs/reference-lint.md#speed)."""
    import shutil

    nice = shutil.which("nice")
    return [nice, "-n", "10"] if nice else []


def image(root: Path, proto_dir: str) -> dict[str, Any]:
    """`buf build -o image.json`: the descriptor with source info."""
    with tempfile.TemporaryDirectory(prefix="framework-lint-") as tmp:
        out = Path(tmp) / "image.json"
        argv = [_buf(), "build", "-o", str(out)]
        if not (root / "buf.yaml").is_file():
            argv.insert(2, proto_dir)
        proc = subprocess.run([*_lower_priority(), *argv], cwd=root, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise LinterCannotRun(f"buf build (the protos do not compile):\n{(proc.stderr or proc.stdout).strip()}")
        data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return data


def buf_lint(root: Path, proto_dir: str) -> list[Finding]:
    argv = [_buf(), "lint", "--error-format", "json"]
    if not (root / "buf.yaml").is_file():
        argv.insert(2, proto_dir)
    proc = subprocess.run([*_lower_priority(), *argv], cwd=root, capture_output=True, text=True, timeout=300)
    out: list[Finding] = []
    for line in proc.stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        path = str(item.get("path", ""))
        rel = path if (root / path).is_file() else f"{proto_dir}/{path}"
        out.append(Finding(analyzer="buf lint", rule=str(item.get("type", "")), severity=ERROR, file=rel,
                           line=int(item.get("start_line") or 1), column=int(item.get("start_column") or 1),
                           message=str(item.get("message", ""))))
    if proc.returncode not in (0, 100) or (proc.returncode == 100 and not out):
        raise LinterCannotRun(f"buf lint failed (exit {proc.returncode}):\n{(proc.stderr or proc.stdout).strip()}")
    return out


def _local(image: dict[str, Any], proto_dir: Path) -> Iterator[dict[str, Any]]:
    for file in image.get("file", []):
        if (proto_dir / file["name"]).is_file():
            yield file


def _spans(file: dict[str, Any]) -> dict[tuple[int, ...], tuple[int, int, str]]:
    """Source path -> (line, column, its comments), 1-based."""
    out: dict[tuple[int, ...], tuple[int, int, str]] = {}
    for loc in (file.get("sourceCodeInfo") or {}).get("location", []):
        span = loc.get("span") or [0, 0]
        text = (loc.get("leadingComments") or "") + (loc.get("trailingComments") or "")
        out[tuple(loc.get("path", []))] = (span[0] + 1, span[1] + 1, text)
    return out


def entity_messages(image: dict[str, Any]) -> Iterator[tuple[str, int, str]]:
    """(file, line, message name) of each top-level message marked framework:entity."""
    for file in image.get("file", []):
        spans = _spans(file)
        for i, msg in enumerate(file.get("messageType", [])):
            line, _, text = spans.get((4, i), (1, 1, ""))
            if "framework:entity" in text.split():
                yield _file_path(file), line, msg["name"]


def entity_fields(image: dict[str, Any]) -> Iterator[tuple[str, int, str, str, bool]]:
    """(file, line, message, field, declared `optional`) of each field of each framework:entity message."""
    for file in image.get("file", []):
        spans = _spans(file)
        for i, msg in enumerate(file.get("messageType", [])):
            if "framework:entity" not in spans.get((4, i), (1, 1, ""))[2].split():
                continue
            for j, field in enumerate(msg.get("field", [])):
                line = spans.get((4, i, 2, j), (1, 1, ""))[0]
                yield _file_path(file), line, msg["name"], field["name"], bool(field.get("proto3Optional"))


def _file_path(file: dict[str, Any]) -> str:
    return str(file.get("_rel", file["name"]))


def prepare(image: dict[str, Any], proto_dir: str, root: Path) -> dict[str, Any]:
    """Keep the project's own files and give each its path relative to the project root."""
    local = list(_local(image, root / proto_dir))
    for f in local:
        f["_rel"] = f"{proto_dir}/{f['name']}"
    return {"file": local}


def _services(image: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict, tuple[int, int]]]:
    for file in image.get("file", []):
        spans = _spans(file)
        for si, svc in enumerate(file.get("service", [])):
            line, col, _ = spans.get((6, si), (1, 1, ""))
            yield _file_path(file), svc, spans, (si, line)


def proto_options(image: dict[str, Any]) -> list[Finding]:
    out = []
    for file, svc, spans, (si, _) in _services(image):
        for mi, method in enumerate(svc.get("method", [])):
            opts = framework_options(method, "method")
            line, col, _ = spans.get((6, si, 2, mi), (1, 1, ""))
            name = method["name"]
            if opts.get("read_only") and name.startswith(WRITE_VERBS):
                out.append(Finding(analyzer="proto-options", rule="proto-options", severity=ERROR, file=file,
                                   line=line, column=col, message=f"{name} is marked read_only but is named as a write",
                                   hint="drop read_only, or rename the method"))
            if opts.get("idempotent") and method.get("clientStreaming"):
                out.append(Finding(analyzer="proto-options", rule="proto-options", severity=ERROR, file=file,
                                   line=line, column=col, message=f"{name} streams from the client: it cannot be "
                                   "idempotent (a retry replays a partial stream)"))
    return out


def static_export(image: dict[str, Any]) -> list[Finding]:
    out = []
    for file, svc, spans, (si, line) in _services(image):
        if not framework_options(svc, "service").get("static_export"):
            continue
        for mi, method in enumerate(svc.get("method", [])):
            opts = framework_options(method, "method")
            mline, col, _ = spans.get((6, si, 2, mi), (line, 1, ""))
            if not opts.get("read_only") or method.get("clientStreaming") or method.get("serverStreaming"):
                out.append(Finding(analyzer="static-export", rule="static-export", severity=ERROR, file=file,
                                   line=mline, column=col, message=f"{svc['name']} is static_export but "
                                   f"{method['name']} is not a unary read_only method",
                                   hint="mark it (framework.v1.method) = {read_only: true}, or move it to another "
                                   "service"))
    return out


_KIND_OF_PATH = {4: "proto-message", 6: "proto-service", 5: "proto-enum"}


def proto_markers(image: dict[str, Any]) -> list[Finding]:
    known = {a.name: a for a in spec.MARKERS}
    out = []
    for file in image.get("file", []):
        for path, (line, col, text) in _spans(file).items():
            words = [w.rstrip(".,;") for w in text.split() if w.startswith(spec.MARKER_PREFIX)]
            for word in words:
                name = word.partition("=")[0]
                kind = _element_kind(path)
                marker = known.get(name)
                if name == markers.MARKER_WORD:
                    continue
                if marker is None:
                    out.append(Finding(analyzer="proto-markers", rule="proto-markers", severity=ERROR,
                                       file=_file_path(file), line=line, column=col,
                                       message=f"unknown marker {name!r}",
                                       hint="see `framework lint` markers in docs/reference-lint.md#markers"))
                elif marker.kind != kind:
                    out.append(Finding(analyzer="proto-markers", rule="proto-markers", severity=WARNING,
                                       file=_file_path(file), line=line, column=col,
                                       message=f"{name} applies to a {marker.kind}, not to this {kind or 'element'}"))
    return out


def _element_kind(path: tuple[int, ...]) -> str | None:
    if len(path) == 2:
        return _KIND_OF_PATH.get(path[0])
    if len(path) == 4 and path[0] == 4 and path[2] == 2:
        return "proto-field"
    if len(path) == 4 and path[0] == 6 and path[2] == 2:
        return "proto-method"
    return None


def vendored_protos(root: Path, proto_dir: str, module: str) -> list[Finding]:
    """framework/v1/options.proto is exactly what `project new` vendors (its hash marker intact)."""
    rel = f"{proto_dir}/{spec.OPTIONS_PROTO}"
    path = root / rel
    if not path.is_file():
        return []
    want = markers.stamp(rel, spec.options_proto(module))
    have = path.read_text(encoding="utf-8")
    if have == want:
        return []
    line = next((i + 1 for i, (a, b) in enumerate(zip(have.splitlines(), want.splitlines(), strict=False))
                 if a != b), 1)
    return [Finding(analyzer="vendored-protos", rule="vendored-protos", severity=ERROR, file=rel, line=line,
                    message="framework/v1/options.proto differs from the framework's copy",
                    hint="run `framework generate` to restore it")]
