"""On a snapshot mismatch, put the changed screen lines (expected vs actual, as text) into the failure
report, so a CI log shows what moved without the HTML report."""

from __future__ import annotations

import difflib
import html
import pickle
import re
from typing import Any

_TEXT = re.compile(r'<text[^>]*?y="([\d.]+)"[^>]*>(.*?)</text>', re.S)
MAX_LINES = 24


def svg_rows(svg: str) -> list[str]:
    """The screen's text, one string per terminal row (by the y of each text run)."""
    rows: dict[float, list[str]] = {}
    for m in _TEXT.finditer(svg):
        rows.setdefault(float(m.group(1)), []).append(html.unescape(re.sub("<[^>]+>", "", m.group(2))))
    return ["".join(parts).replace("\xa0", " ").rstrip() for _, parts in sorted(rows.items())]


def text_diff(expected_svg: str, actual_svg: str) -> str:
    lines = list(difflib.unified_diff(svg_rows(expected_svg), svg_rows(actual_svg), "expected", "actual",
                                      n=0, lineterm=""))
    if not lines:
        return "the screen text is identical: the difference is in colours or styles only"
    more = len(lines) - MAX_LINES
    return "\n".join(lines[:MAX_LINES] + ([f"... {more} more lines"] if more > 0 else []))


def report_section(item: Any) -> str | None:
    """The text diff of `item`'s snapshot comparison, if it made one and it failed."""
    try:
        from pytest_textual_snapshot import node_to_report_path
    except ImportError:  # pragma: no cover - the plugin is a test dependency
        return None
    path = node_to_report_path(item)
    if not path.exists():
        return None
    try:
        data = pickle.loads(path.read_bytes())
    except Exception as exc:  # noqa: BLE001 - a diagnostic must never hide the failure itself
        return f"(snapshot data unreadable: {exc})"
    result, expected, actual = data[0], data[1], data[2]
    return None if result else text_diff(expected, actual)
