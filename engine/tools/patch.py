"""The patch tool (docs/reference-tools.md#tools-parameters-defaults-and-limits): the `*** Begin Patch` format,
applied atomically across files.

Parsing and context matching follow the reference apply_patch implementation: a chunk is found
by its `@@` anchor and its context/removed lines, compared exactly, then ignoring trailing
whitespace, then ignoring whitespace at both ends, then with Unicode punctuation normalised.
A heredoc wrapper (`apply_patch <<'EOF' ... EOF`) around the patch is accepted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.tools.base import Tool, ToolContext, ToolError, ToolResult, schema, string, unified_diff
from engine.tools.fileio import check_unmodified, commit_writes, display, read_text

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE, MOVE = "*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: "
EOF_MARK = "*** End of File"
_HEREDOC = re.compile(r"^(?:\S+\s+)?<<-?\s*(['\"]?)(\w+)\1\s*$")


@dataclass
class Chunk:
    context: str | None
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    eof: bool = False


@dataclass
class Hunk:
    kind: str  # add | delete | update
    path: str
    move_to: str | None = None
    content: str = ""
    chunks: list[Chunk] = field(default_factory=list)


def _strip_heredoc(lines: list[str]) -> list[str]:
    if len(lines) >= 4:
        m = _HEREDOC.match(lines[0].strip())
        if m and lines[-1].strip() == m.group(2):
            return lines[1:-1]
    return lines


def parse_patch(text: str) -> list[Hunk]:
    lines = _strip_heredoc(text.strip().splitlines())
    lines = [ln.rstrip("\r") for ln in lines]
    if not lines or lines[0].strip() != BEGIN:
        raise ToolError(f"invalid patch: the first line must be '{BEGIN}'")
    if lines[-1].strip() != END:
        raise ToolError(f"invalid patch: the last line must be '{END}'")
    body, hunks, i = lines[1:-1], [], 0
    while i < len(body):
        line = body[i].strip()
        if line.startswith(ADD):
            hunk = Hunk("add", line[len(ADD) :].strip())
            i += 1
            added = []
            while i < len(body) and body[i].startswith("+"):
                added.append(body[i][1:])
                i += 1
            hunk.content = "".join(a + "\n" for a in added)
        elif line.startswith(DELETE):
            hunk = Hunk("delete", line[len(DELETE) :].strip())
            i += 1
        elif line.startswith(UPDATE):
            hunk = Hunk("update", line[len(UPDATE) :].strip())
            i += 1
            if i < len(body) and body[i].startswith(MOVE):
                hunk.move_to = body[i][len(MOVE) :].strip()
                i += 1
            i = _parse_chunks(body, i, hunk)
        elif line == "":
            i += 1
            continue
        else:
            raise ToolError(
                f"invalid patch line {i + 2}: {body[i]!r} is not a '*** Add File:', "
                "'*** Delete File:' or '*** Update File:' header"
            )
        if not hunk.path:
            raise ToolError(f"invalid patch line {i + 1}: a file header without a path")
        hunks.append(hunk)
    if not hunks:
        raise ToolError("invalid patch: no file sections between Begin Patch and End Patch")
    return hunks


def _parse_chunks(body: list[str], i: int, hunk: Hunk) -> int:
    chunk: Chunk | None = None
    while i < len(body):
        line = body[i]
        if line.startswith("*** ") and line.strip() != EOF_MARK:
            break
        if line.strip() == EOF_MARK:
            if chunk is None:
                raise ToolError(f"invalid patch: '{EOF_MARK}' before any change in {hunk.path}")
            chunk.eof = True
            i += 1
            continue
        if line.startswith("@@"):
            if chunk is not None and not (chunk.old or chunk.new):
                chunk.context = line[2:].strip() or chunk.context
            else:
                chunk = Chunk(line[2:].strip() or None)
                hunk.chunks.append(chunk)
        else:
            if chunk is None:  # the first chunk may omit its @@ line
                chunk = Chunk(None)
                hunk.chunks.append(chunk)
            if line == "":
                chunk.old.append("")
                chunk.new.append("")
            elif line[0] == " ":
                chunk.old.append(line[1:])
                chunk.new.append(line[1:])
            elif line[0] == "-":
                chunk.old.append(line[1:])
            elif line[0] == "+":
                chunk.new.append(line[1:])
            else:
                raise ToolError(
                    f"invalid patch line in {hunk.path}: {line!r} must start with ' ', '+', '-' or '@@'"
                )
        i += 1
    if not any(c.old or c.new for c in hunk.chunks):
        raise ToolError(f"invalid patch: update of {hunk.path} has no changes")
    return i


_PUNCT = str.maketrans(
    {
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u00a0": " ",
        "\u2002": " ",
        "\u2003": " ",
        "\u2004": " ",
        "\u2005": " ",
        "\u2006": " ",
        "\u2007": " ",
        "\u2008": " ",
        "\u2009": " ",
        "\u200a": " ",
        "\u202f": " ",
        "\u205f": " ",
        "\u3000": " ",
    }
)

_COMPARERS = (
    lambda a, b: a == b,
    lambda a, b: a.rstrip() == b.rstrip(),
    lambda a, b: a.strip() == b.strip(),
    lambda a, b: a.strip().translate(_PUNCT) == b.strip().translate(_PUNCT),
)


def seek_sequence(lines: list[str], pattern: list[str], start: int, eof: bool) -> int | None:
    """First index >= start where `pattern` occurs, trying ever looser comparisons (reference order)."""
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    first = len(lines) - len(pattern) if eof else start
    last = len(lines) - len(pattern)
    for same in _COMPARERS:
        for begin in (first, start) if eof else (start,):
            for i in range(begin, last + 1):
                if all(same(lines[i + k], p) for k, p in enumerate(pattern)):
                    return i
    return None


def apply_chunks(path: str, original: str, chunks: list[Chunk]) -> str:
    lines = original.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    replacements: list[tuple[int, int, list[str]]] = []
    index = 0
    for n, chunk in enumerate(chunks, start=1):
        if chunk.context is not None:
            at = seek_sequence(lines, [chunk.context], index, False)
            if at is None:
                raise ToolError(
                    f"patch failed: hunk {n} of {path}: context '@@ {chunk.context}' not found; "
                    "nothing was applied"
                )
            index = at + 1
        if not chunk.old:
            replacements.append((len(lines), 0, chunk.new))
            continue
        old, new = chunk.old, chunk.new
        at = seek_sequence(lines, old, index, chunk.eof)
        if at is None and old and old[-1] == "":
            old, new = old[:-1], (new[:-1] if new and new[-1] == "" else new)
            at = seek_sequence(lines, old, index, chunk.eof)
        if at is None:
            shown = "\n".join(chunk.old[:6])
            raise ToolError(
                f"patch failed: hunk {n} of {path}: these lines were not found:\n{shown}\nnothing was applied"
            )
        replacements.append((at, len(old), new))
        index = at + len(old)
    for at, length, new in sorted(replacements, key=lambda r: r[0], reverse=True):
        lines[at : at + length] = new
    return "\n".join(lines) + "\n" if lines else ""


def patch(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    hunks = parse_patch(params["patch_text"])
    changes: list[tuple[Path, bytes | None]] = []
    diffs, summary = [], []
    for hunk in hunks:
        path = ctx.resolve(hunk.path)
        if hunk.kind == "add":
            if path.exists():
                check_unmodified(ctx, path)
            changes.append((path, hunk.content.encode("utf-8")))
            diffs.append(unified_diff(display(ctx, path), "", hunk.content))
            summary.append(f"A {display(ctx, path)}")
        elif hunk.kind == "delete":
            tf = read_text(path)
            check_unmodified(ctx, path)
            changes.append((path, None))
            diffs.append(unified_diff(display(ctx, path), tf.text, ""))
            summary.append(f"D {display(ctx, path)}")
        else:
            tf = read_text(path)
            check_unmodified(ctx, path)
            new = apply_chunks(hunk.path, tf.text, hunk.chunks)
            target = ctx.resolve(hunk.move_to) if hunk.move_to else path
            changes.append((target, tf.encode(new)))
            if target != path:
                changes.append((path, None))
            diffs.append(unified_diff(display(ctx, target), tf.text, new))
            summary.append(
                f"M {display(ctx, target)}" + (f" (from {display(ctx, path)})" if target != path else "")
            )
    commit_writes(ctx, changes)
    diff = "".join(diffs)
    return ToolResult(
        output="applied patch:\n" + "\n".join(summary) + "\n" + diff, data={"files": summary, "diff": diff}
    )


TOOLS = [
    Tool(
        "patch",
        ("file", "default"),
        "Apply a patch in the '*** Begin Patch' format (Update with @@ anchors, Add, Delete). "
        "Atomic: nothing is applied if any hunk fails.",
        schema(
            {
                "patch_text": string(
                    "patch: '*** Begin Patch', then '*** Update File: <path>' / "
                    "'*** Add File: <path>' / '*** Delete File: <path>' sections, "
                    "then '*** End Patch'"
                )
            },
            ("patch_text",),
        ),
        patch,
    ),
]
