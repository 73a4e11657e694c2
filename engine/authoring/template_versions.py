"""Template versions (docs/reference-project.md#template-versions): `assets/templates/` holds this framework's
templates; `assets/templates/versions/<version>/` holds, for each older shipped release, only the templates that
differed from the next newer release, and `versions/manifest.json` the files that release's generation left out
(`absent`) or added (`extra`) against the next newer one. Rendering version V looks a template up in the
overlays of V, V+1, ... (nearest first), then in the base; its plan is the current plan with the deltas of every
release from the newest down to V applied.

`generate` renders the project's pinned `framework_version` when this framework ships it, else the current
templates; `project upgrade` moves the pin.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine import __version__
from engine.paths import assets_dir

if TYPE_CHECKING:
    from engine.authoring.plan import Plan

_RENDERING: ContextVar[str | None] = ContextVar("framework_template_version", default=None)


def base_dir() -> Path:
    return assets_dir() / "templates"


def key(version: str) -> tuple[int, ...]:
    """A release version's sort key ("0.10.0" after "0.9.1"); a version that is not dotted digits has none."""
    parts = version.strip().split(".")
    if not parts or not all(p.isdigit() for p in parts):
        raise ValueError(version)
    return tuple(int(p) for p in parts)


@cache
def manifest() -> dict[str, dict[str, Any]]:
    path = base_dir() / "versions" / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    versions = data.get("versions", {}) if isinstance(data, dict) else {}
    return {str(k): v for k, v in versions.items() if isinstance(v, dict)}


def current() -> str:
    return __version__


def shipped() -> list[str]:
    """Every release whose templates this framework can render, oldest first (the current one last)."""
    return sorted({current(), *manifest()}, key=key)


def is_shipped(version: object) -> bool:
    return isinstance(version, str) and version in shipped()


def pinned(config: dict[str, Any]) -> str:
    """The version `generate` renders: framework.yaml's `framework_version` when shipped, else the current one."""
    value = config.get("framework_version")
    value = str(value) if value is not None else None
    return value if value is not None and is_shipped(value) else current()


def _newer(version: str) -> list[str]:
    """The shipped older releases from `version` up to (not including) the current one, nearest first."""
    return [v for v in shipped() if key(version) <= key(v) < key(current())]


def active() -> str:
    return _RENDERING.get() or current()


@contextmanager
def rendering(version: str | None) -> Iterator[None]:
    """Templates rendered inside the block are `version`'s (None: the current ones)."""
    token = _RENDERING.set(version if version and version != current() else None)
    try:
        yield
    finally:
        _RENDERING.reset(token)


def template_path(rel: str, version: str | None = None) -> Path:
    version = version or active()
    for v in (_newer(version) if version != current() else []):
        overlay = base_dir() / "versions" / v / rel
        if overlay.is_file():
            return overlay
    return base_dir() / rel


def digest(version: str | None = None) -> str:
    """One hash over every template `version` renders (a release regenerates even when inputs did not change)."""
    import hashlib

    version = version or current()
    h = hashlib.sha256(version.encode() + b"\0")
    base = base_dir()
    for path in sorted(p for p in base.rglob("*.tmpl") if "versions" not in p.relative_to(base).parts[:1]):
        h.update(path.relative_to(base).as_posix().encode() + b"\0" + path.read_bytes())
    for v in (_newer(version) if version != current() else []):
        h.update(json.dumps(manifest()[v], sort_keys=True).encode())
        for path in sorted((base / "versions" / v).rglob("*.tmpl")):
            h.update(path.relative_to(base).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _matches(path: str, pattern: str) -> bool:
    """`absent` entries: an exact path, or a glob whose `*` stays within one directory."""
    import re

    if "*" not in pattern:
        return path == pattern
    return re.fullmatch("[^/]*".join(re.escape(part) for part in pattern.split("*")), path) is not None


def adjust(plan: Plan, version: str | None = None) -> None:
    """The current plan made `version`'s: from the newest older release down to `version`, drop the files
    that release did not write (`absent`) and add those it wrote (`extra`, when its `with` file is planned)."""
    from string import Template

    version = version or active()
    if version == current():
        return
    with rendering(version):
        for v in reversed(_newer(version)):
            delta = manifest()[v]
            for pattern in delta.get("absent", []):  # a path, or a glob (`*` within one directory)
                for path in [p for p in plan.files if _matches(p, str(pattern))]:
                    plan.files.pop(path, None)
            for extra in delta.get("extra", []):
                path, with_ = str(extra["path"]), extra.get("with")
                if with_ is not None and str(with_) not in plan.files:
                    continue
                text = Template(template_path(str(extra["template"]), version).read_text(encoding="utf-8")
                                ).substitute(framework_version=version)
                if extra.get("kind", "generated") == "scaffold":
                    plan.scaffold(path, text)
                else:
                    plan.generated(path, text)


def target(to: str | None) -> str:
    """`project upgrade --to`: a shipped release no newer than this framework (default: this framework's);
    anything else is a usage error (exit 2) naming the shipped ones."""
    from engine.errors import UsageError

    if to is None:
        return current()
    to = to.strip()
    if is_shipped(to):
        return to
    hint = f"shipped: {', '.join(shipped())}"
    try:
        newer = key(to) > key(current())
    except ValueError:
        raise UsageError(f"--to {to!r}: not a release version", hint=hint) from None
    raise UsageError(f"--to {to}: " + (f"newer than this framework ({current()}); install that release to "
                                       "upgrade to it" if newer else
                                       "this framework does not ship that release's templates"), hint=hint)
