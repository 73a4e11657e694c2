"""The limits of the names a command is given, checked where the name enters (one module).

Names become path components (`deploy/kcl/<env>/`, `.framework/releases/<version>.json`,
`~/.platform/runs/<id>/`), so they are checked before any file is touched: a name outside its limit
is a usage error (exit 2) that says the limit, never a file-system error (docs/reference-env.md#names).

| name | limit |
|---|---|
| environment, run id (`NAME_RE`) | 1-128 of `A-Z a-z 0-9 . _ -`, first a letter or digit |
| daemon | the same, 1-64 |
| automation | the same, 1-100 |
| release version (`RELEASE_RE`) | the same plus `+`, 1-128; refused with exit 1 (`invalid_input`) |
| project, service, entity, binary (authoring) | snake_case identifier, 1-64 |
| migration | 1-100 characters before its slug is made |
"""

from __future__ import annotations

import re

from engine.errors import EngineError, UsageError

MAX_NAME = 128
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
RELEASE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
MAX_IDENTIFIER = 64  # authoring names become Go packages, files and directories
MAX_MIGRATION_NAME = 100


def shown(value: str, limit: int = 60) -> str:
    """A value for a message: repr, cut to `limit` characters with its length (a 5,000-character name
    is not echoed back whole)."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value)} characters)"


ALLOWED = "letters, digits, '.', '_' and '-', starting with a letter or digit"


def check(value: str, what: str, *, pattern: re.Pattern[str] = NAME_RE, limit: int = MAX_NAME,
          allowed: str = ALLOWED, error: type[EngineError] = UsageError) -> str:
    """`value` if it is a valid `what` name, else `error` (a usage error, exit 2) saying the limit."""
    label = what if what.endswith(("id", "version")) else f"{what} name"
    hint = f"{label[0].upper()}{label[1:]}: 1-{limit} {allowed}"
    if len(value) > limit:
        raise error(f"{label} {shown(value)} is longer than {limit} characters", hint=hint)
    if not pattern.match(value):
        raise error(f"invalid {label} {shown(value)}", hint=hint)
    return value


def environment(value: str) -> str:
    return check(value, "environment")


def length(value: str, what: str, limit: int) -> str:
    """Only the length (for names with their own character rules)."""
    if len(value) > limit:
        raise UsageError(f"{what} name {shown(value)} is longer than {limit} characters")
    return value

