"""Hash markers of generated files (docs/reference-authoring.md, Ownership).

Every generated file carries one marker line holding the sha256 of its content *without* that
line. A file whose marker does not match its content was edited by hand (`ci verify-generated`).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

MARKER_WORD = "framework:hash"
MARKER_RE = re.compile(r"framework:hash[\"']?:?\s*[\"']?sha256:(?P<digest>[0-9a-f]{64})")
# The comment style of the marker line by file suffix; JSON carries it as a first key instead.
_COMMENT = {".go": "//", ".proto": "//", ".k": "#", ".yaml": "#", ".yml": "#", ".toml": "#", ".sql": "--",
            ".md": None, ".json": None, ".sh": "#", "": "#",
            ".ts": "//", ".tsx": "//", ".js": "//", ".mjs": "//"}


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _split(text: str) -> tuple[str, str | None]:
    """(content without the marker line, the marker's digest or None)."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        m = MARKER_RE.search(line)
        if m and MARKER_WORD in line:
            return "".join(lines[:i] + lines[i + 1:]), m["digest"]
    return text, None


def stamp(path: str, text: str) -> str:
    """`text` with its marker line inserted (an existing marker is replaced)."""
    body, _ = _split(text)
    value = digest(body)
    suffix = Path(path).suffix
    if suffix == ".json":
        # `{` then the marker key: the file stays valid JSON and the marker sits on its own line.
        head, sep, rest = body.partition("{\n")
        if sep != "{\n" or head.strip():
            raise ValueError(f"{path}: a generated JSON file starts with '{{' and a newline")
        tail = "" if rest.strip().startswith("}") else ","
        return f'{{\n  "{MARKER_WORD}": "sha256:{value}"{tail}\n{rest}'
    if suffix == ".md":
        line = f"<!-- {MARKER_WORD} sha256:{value} -->\n"
    else:
        line = f"{_COMMENT.get(suffix, '#')} {MARKER_WORD} sha256:{value}\n"
    lines = body.splitlines(keepends=True)
    # After a leading "Code generated ... DO NOT EDIT." line (Go's generated-file convention), else first.
    at = 0
    for i, existing in enumerate(lines[:3]):
        if existing.startswith("// Code generated") and existing.rstrip().endswith("DO NOT EDIT."):
            at = i + 1
            break
    return "".join(lines[:at]) + line + "".join(lines[at:])


def _unstamp_json(text: str) -> str:
    # The JSON marker line carries a trailing comma when keys follow; the stamped body had none.
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.lstrip().startswith(f'"{MARKER_WORD}"'):
            return "".join(lines[:i] + lines[i + 1:])
    return text


def check(path: str, text: str) -> str:
    """'ok', 'missing' (no marker) or 'mismatch' (content edited after generation)."""
    if Path(path).suffix == ".json":
        m = MARKER_RE.search(text)
        if not m:
            return "missing"
        return "ok" if digest(_unstamp_json(text)) == m["digest"] else "mismatch"
    body, value = _split(text)
    if value is None:
        return "missing"
    return "ok" if digest(body) == value else "mismatch"


def has_marker(text: str) -> bool:
    return MARKER_WORD in text[:4096] and MARKER_RE.search(text[:4096]) is not None
