"""File tools (docs/reference-tools.md#tools-parameters-defaults-and-limits): view, write, edit, find_replace,
move_code. patch is in patch.py."""

from __future__ import annotations

import difflib
import itertools
import os
import re
from pathlib import Path
from typing import Any

from engine.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    boolean,
    clamp,
    integer,
    schema,
    string,
    unified_diff,
)
from engine.tools.fileio import TextFile, check_unmodified, commit_writes, display, read_text

VIEW_DEFAULT_LIMIT = 500
VIEW_MAX_LIMIT = 256000
VIEW_MAX_LINE = 500
VIEW_MAX_OUTPUT = 16 * 1024


def _similar_names(path: Path, root: Path) -> list[str]:
    """Names close to a missing file: siblings first, then same-named files under the root."""
    name = path.name
    candidates: list[Path] = []
    if path.parent.is_dir():
        candidates = [p for p in path.parent.iterdir()]
    found = difflib.get_close_matches(name, [p.name for p in candidates], n=5, cutoff=0.5)
    out = [str(path.parent / f) for f in found]
    if len(out) < 5 and root.is_dir():
        seen = 0
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [
                d for d in dirnames if not d.startswith(".") and d not in ("node_modules", "__pycache__")
            ]
            for f in filenames:
                seen += 1
                if (
                    f == name
                    or f.lower() == name.lower()
                    or difflib.SequenceMatcher(None, f, name).ratio() > 0.8
                ):
                    full = str(Path(dirpath) / f)
                    if full not in out:
                        out.append(full)
            if seen > 20000 or len(out) >= 5:
                break
    return out[:5]


def view(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path = ctx.resolve(params["file_path"])
    offset = max(0, int(params.get("offset") or 0))
    limit = clamp(params.get("limit"), VIEW_DEFAULT_LIMIT, VIEW_MAX_LIMIT, minimum=1)
    if not path.exists():
        similar = _similar_names(path, ctx.root)
        hint = ("; did you mean: " + ", ".join(similar)) if similar else ""
        raise ToolError(f"file not found: {path}{hint}", code="not_found")
    if path.is_dir():
        raise ToolError(f"{path} is a directory; use glob to list files")
    with path.open("rb") as fh:
        if b"\x00" in fh.read(8192):
            raise ToolError(f"{path} is a binary file")
    ctx.remember(path)
    parts: list[str] = []
    size = 0
    shown = 0
    truncated_lines = 0
    capped = False
    more = False
    with path.open("r", encoding="utf-8", errors="replace", newline="") as fh:
        for number, line in enumerate(itertools.islice(fh, offset, offset + limit + 1), start=offset + 1):
            if shown == limit:
                more = True
                break
            line = line.rstrip("\r\n")
            if len(line) > VIEW_MAX_LINE:
                line = line[:VIEW_MAX_LINE] + f"... [line truncated, {len(line)} characters]"
                truncated_lines += 1
            entry = f"{number:6d}\t{line}\n"
            entry_size = len(entry.encode("utf-8"))
            if size + entry_size > VIEW_MAX_OUTPUT - 200:
                capped = True
                more = True
                break
            parts.append(entry)
            size += entry_size
            shown += 1
    end = offset + shown
    if shown == 0 and offset > 0:
        parts.append(f"(no lines at offset {offset}: the file is shorter)\n")
    if capped:
        parts.append(
            f"[output capped at 16 KB; showed lines {offset + 1}-{end}; continue with offset={end}]\n"
        )
    elif more:
        parts.append(f"[showed lines {offset + 1}-{end}; more lines follow: continue with offset={end}]\n")
    return ToolResult(
        output="".join(parts),
        data={
            "file_path": str(path),
            "offset": offset,
            "lines": shown,
            "more": more,
            "truncated_lines": truncated_lines,
            "capped": capped,
        },
    )


def write(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path = ctx.resolve(params["file_path"])
    content: str = params["content"]
    current = read_text(path, missing_ok=True)
    check_unmodified(ctx, path)
    new = content.replace("\r\n", "\n") if current.crlf else content
    if current.exists and current.text == new:
        ctx.remember(path)
        return ToolResult(
            output=f"{display(ctx, path)} unchanged (content identical); nothing written",
            data={"file_path": str(path), "changed": False, "diff": ""},
        )
    diff = unified_diff(display(ctx, path), current.text, new)
    commit_writes(ctx, [(path, current.encode(new))])
    verb = "updated" if current.exists else "created"
    return ToolResult(
        output=f"{verb} {display(ctx, path)}\n{diff}",
        data={"file_path": str(path), "changed": True, "created": not current.exists, "diff": diff},
    )


def edit(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """All edits succeed or none do, across files (`edit`)."""
    edits: list[dict[str, Any]] = params["edits"]
    if not edits:
        raise ToolError("edits is empty: give at least one edit object")
    files: dict[Path, TextFile] = {}
    texts: dict[Path, str] = {}
    for i, e in enumerate(edits, start=1):
        path = ctx.resolve(e["file_path"])
        old, new = e["old_string"], e["new_string"]
        if path not in files:
            files[path] = read_text(path, missing_ok=True)
            texts[path] = files[path].text
            check_unmodified(ctx, path)
        tf, text = files[path], texts[path]
        old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
        if old == "":
            # Empty old_string creates a file (`edit`); refuse to clobber one with content.
            if tf.exists and text != "" or path in texts and text != "":
                raise ToolError(
                    f"edit {i}: old_string is empty but {path} already has content; nothing was changed"
                )
            texts[path] = new
            continue
        if not tf.exists and text == "":
            raise ToolError(f"edit {i}: file not found: {path}; nothing was changed")
        if old == new:
            raise ToolError(f"edit {i}: old_string and new_string are identical; nothing was changed")
        count = text.count(old)
        if count == 0:
            raise ToolError(f"edit {i}: old_string not found in {path}; nothing was changed")
        if count > 1 and not e.get("replace_all"):
            raise ToolError(
                f"edit {i}: old_string matches {count} times in {path}; add surrounding context "
                "to make it unique or set replace_all; nothing was changed",
                code="ambiguous",
            )
        texts[path] = text.replace(old, new) if e.get("replace_all") else text.replace(old, new, 1)
    changes, diffs = [], []
    for path, tf in files.items():
        if texts[path] != tf.text or not tf.exists:
            changes.append((path, tf.encode(texts[path])))
            diffs.append(unified_diff(display(ctx, path), tf.text, texts[path]))
    commit_writes(ctx, changes)
    diff = "".join(diffs)
    return ToolResult(
        output=f"applied {len(edits)} edit(s) to {len(changes)} file(s)\n{diff}",
        data={"files": [str(p) for p, _ in changes], "edits": len(edits), "diff": diff},
    )


_GROUP = re.compile(r"\$\$|\$\{(\w+)\}|\$(\d+)")


def find_replace(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    from engine.tools.search import list_files

    pattern, replacement = params["find_pattern"], params["replace_text"]
    flags = re.IGNORECASE if params.get("ignore_case") else 0
    try:
        regex = re.compile(pattern if params.get("use_regex") else re.escape(pattern), flags | re.MULTILINE)
    except re.error as exc:
        raise ToolError(f"find_pattern is not a valid regular expression: {exc}") from None
    if params.get("use_regex"):
        groups = _template_parts(replacement)

        def repl(m: re.Match[str]) -> str:
            out = []
            for kind, value in groups:
                if kind == "text":
                    out.append(value)
                else:
                    try:
                        out.append(m.group(int(value) if value.isdigit() else value) or "")
                    except (IndexError, KeyError):
                        raise ToolError(
                            f"replace_text refers to group ${value}, which find_pattern lacks"
                        ) from None
            return "".join(out)

        sub: Any = repl
    else:
        sub = lambda m: replacement  # noqa: E731 - literal replacement, no group syntax
    changes, summary, diffs = [], [], []
    total = 0
    for path in list_files(ctx, ctx.root, params.get("file_glob")):
        try:
            tf = read_text(path)
        except ToolError:
            continue
        new, n = regex.subn(sub, tf.text)
        if n and new != tf.text:
            check_unmodified(ctx, path)
            changes.append((path, tf.encode(new)))
            summary.append({"file": display(ctx, path), "replacements": n})
            diffs.append(unified_diff(display(ctx, path), tf.text, new))
            total += n
    commit_writes(ctx, changes)
    lines = [f"{s['file']}: {s['replacements']} replacement(s)" for s in summary]
    head = f"{total} replacement(s) in {len(changes)} file(s)"
    return ToolResult(
        output="\n".join([head, *lines]) + "\n",
        data={"total": total, "files": summary, "diff": "".join(diffs)},
    )


def _template_parts(template: str) -> list[tuple[str, str]]:
    parts: list[tuple[str, str]] = []
    pos = 0
    for m in _GROUP.finditer(template):
        parts.append(("text", template[pos : m.start()]))
        parts.append(("text", "$") if m.group(0) == "$$" else ("group", m.group(1) or m.group(2)))
        pos = m.end()
    parts.append(("text", template[pos:]))
    return parts


def move_code(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    src = ctx.resolve(params["source_file"])
    dst = ctx.resolve(params["target_file"])
    start, end, target = int(params["source_start"]), int(params["source_end"]), int(params["target_line"])
    operation = params.get("operation") or "move"
    if operation not in ("move", "copy"):
        raise ToolError(f"operation must be 'move' or 'copy', not {operation!r}")
    stf = read_text(src)
    lines = stf.text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    if not (1 <= start <= end <= len(lines)):
        raise ToolError(f"source lines {start}-{end} are outside {src} (1-{len(lines)})")
    block = lines[start - 1 : end]
    same = src.resolve() == dst.resolve() if dst.exists() else False
    check_unmodified(ctx, src)
    if same:
        if start <= target < end:
            raise ToolError(f"target_line {target} is inside the moved range {start}-{end}")
        if target > len(lines):
            raise ToolError(f"target_line {target} is past the end of {dst} ({len(lines)} lines)")
        rest = lines[: start - 1] + lines[end:] if operation == "move" else list(lines)
        at = target - (end - start + 1) if operation == "move" and target >= end else target
        new_lines = rest[:at] + block + rest[at:]
        new = "".join(new_lines)
        changes = [(src, stf.encode(new))]
        diff = unified_diff(display(ctx, src), stf.text, new)
    else:
        dtf = read_text(dst, missing_ok=True)
        check_unmodified(ctx, dst)
        dlines = dtf.text.splitlines(keepends=True)
        if dlines and not dlines[-1].endswith("\n"):
            dlines[-1] += "\n"
        if not 0 <= target <= len(dlines):
            raise ToolError(f"target_line {target} is past the end of {dst} ({len(dlines)} lines)")
        dnew = "".join(dlines[:target] + block + dlines[target:])
        changes = [(dst, dtf.encode(dnew))]
        diff = unified_diff(display(ctx, dst), dtf.text, dnew)
        if operation == "move":
            snew = "".join(lines[: start - 1] + lines[end:])
            changes.insert(0, (src, stf.encode(snew)))
            diff = unified_diff(display(ctx, src), stf.text, snew) + diff
    commit_writes(ctx, changes)
    verb = "moved" if operation == "move" else "copied"
    return ToolResult(
        output=f"{verb} lines {start}-{end} of {display(ctx, src)} to {display(ctx, dst)} "
        f"after line {target}\n{diff}",
        data={"operation": operation, "lines": end - start + 1, "diff": diff},
    )


EDIT_OBJECT = {
    "type": "object",
    "required": ["file_path", "old_string", "new_string"],
    "additionalProperties": False,
    "properties": {
        "file_path": string("absolute path of the file to edit"),
        "old_string": string("exact text to replace, whitespace included; empty creates the file"),
        "new_string": string("replacement text; empty deletes the match"),
        "replace_all": boolean("replace every occurrence (default false)", default=False),
    },
}

TOOLS = [
    Tool(
        "view",
        ("file", "readonly", "default"),
        "Read a file with line numbers. Lines over 500 characters are truncated; output is capped at 16 KB.",
        schema(
            {
                "file_path": string("file to read"),
                "offset": integer("starting line, 0-indexed", minimum=0, default=0),
                "limit": integer("max lines; default 500; max 256000", minimum=1, default=500),
            },
            ("file_path",),
        ),
        view,
    ),
    Tool(
        "write",
        ("file", "default"),
        "Write a whole file (parents created). Refuses if the file changed on disk since it was last read.",
        schema(
            {"file_path": string("file to write"), "content": string("full content")},
            ("file_path", "content"),
        ),
        write,
    ),
    Tool(
        "edit",
        ("file", "default"),
        "Replace exact strings in files. All edits succeed or none do; reports a diff.",
        schema(
            {
                "edits": {
                    "type": "array",
                    "items": EDIT_OBJECT,
                    "minItems": 1,
                    "description": "edit objects, applied in order",
                }
            },
            ("edits",),
        ),
        edit,
    ),
    Tool(
        "find_replace",
        ("file", "default"),
        "Find and replace text or a regex across files ($1, $2 for capture groups); reports a summary.",
        schema(
            {
                "find_pattern": string("text or regex"),
                "replace_text": string("replacement; regex capture groups $1, $2 usable"),
                "file_glob": string("restricts files, e.g. **/*.py"),
                "ignore_case": boolean("case-insensitive"),
                "use_regex": boolean("treat pattern as regular expression"),
            },
            ("find_pattern", "replace_text"),
        ),
        find_replace,
    ),
    Tool(
        "move_code",
        ("file", "default"),
        "Move or copy a range of lines to a position in the same or another file.",
        schema(
            {
                "source_file": string("file holding the lines"),
                "source_start": integer("first line, 1-indexed, inclusive", minimum=1),
                "source_end": integer("last line, 1-indexed, inclusive", minimum=1),
                "target_file": string("destination; may equal source_file"),
                "target_line": integer("insert after this line; 0 = beginning", minimum=0),
                "operation": string("move (default) or copy", enum=["move", "copy"], default="move"),
            },
            ("source_file", "source_start", "source_end", "target_file", "target_line"),
        ),
        move_code,
    ),
]
