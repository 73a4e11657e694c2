"""SQL text of a migration: statements with their lines, and what cannot run in a transaction."""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)
# Statements PostgreSQL refuses inside a transaction block, and explicit transaction control:
# a file holding one is run statement by statement without our wrapping transaction.
_NO_TRANSACTION = re.compile(
    r"^\s*(begin|start\s+transaction|commit|end|rollback|abort|vacuum|alter\s+system|"
    r"create\s+database|drop\s+database|create\s+tablespace|drop\s+tablespace|"
    r"(create|drop)\s+(unique\s+)?index\s+concurrently|reindex\b.*\bconcurrently|"
    r"alter\s+table\b.*\bdetach\s+partition\b.*\bconcurrently)\b",
    re.I | re.S,
)


@dataclass(frozen=True)
class Statement:
    text: str
    start: int  # character offset in the file
    line: int  # 1-based line of the statement's first character

    @property
    def code(self) -> str:
        """The statement without comments (empty for a comment-only chunk)."""
        return _COMMENTS.sub(" ", self.text).strip()


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, max(0, offset)) + 1


def split(text: str) -> list[Statement]:
    """Statements of `text` with their offsets (pglast's scanner: tolerant of syntax errors)."""
    import pglast

    out = []
    try:
        slices = list(pglast.split(text, with_parser=False, only_slices=True))
    except Exception:  # noqa: BLE001 - an unterminated quote: fall back to the whole text
        slices = [slice(0, len(text))]
    end = max((sl.stop or 0 for sl in slices), default=0)
    if not is_empty(text[end:]):  # the scanner gives up on e.g. an unbalanced "(": keep the rest
        rest = len(text[end:]) - len(text[end:].lstrip(" \t\r\n;"))
        slices.append(slice(end + rest, len(text)))
    for sl in slices:
        chunk = text[sl]
        # pglast keeps leading comments in the chunk; the line is the first line of code in it.
        lead = len(chunk) - len(_COMMENTS.sub(lambda m: " " * len(m.group()), chunk).lstrip())
        start = (sl.start or 0) + lead
        out.append(Statement(chunk, sl.start or 0, line_of(text, start)))
    return [s for s in out if s.code]


def is_empty(text: str) -> bool:
    """Only comments, whitespace and semicolons."""
    return not _COMMENTS.sub(" ", text).strip(" \t\r\n;")


_HINTS = re.compile(r"\b(begin|start|commit|end|rollback|abort|vacuum|system|database|tablespace|concurrently)\b",
                    re.I)


def may_need_no_transaction(text: str) -> bool:
    """A cheap pre-check: without any of these words no statement needs to run outside a transaction."""
    return _HINTS.search(text) is not None


def needs_no_transaction(statements: list[Statement]) -> bool:
    return any(_NO_TRANSACTION.match(s.code) for s in statements)


def statement_at(statements: list[Statement], offset: int) -> Statement | None:
    """The statement containing character `offset` of the file."""
    found = None
    for s in statements:
        if s.start <= offset:
            found = s
    return found


def excerpt(statement: str, limit: int = 400) -> str:
    text = statement.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."
