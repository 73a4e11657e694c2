"""Templates shipped in assets/templates (string.Template: `$name`; Go code never uses `$`)."""

from __future__ import annotations

from functools import cache
from string import Template

from engine.paths import assets_dir


@cache
def _template(rel: str) -> Template:
    return Template((assets_dir() / "templates" / rel).read_text(encoding="utf-8"))


def render(rel: str, **values: object) -> str:
    return _template(rel).substitute({k: str(v) for k, v in values.items()})


def templates_digest() -> str:
    """One hash over every template: a new framework release regenerates even when inputs did not change."""
    import hashlib

    h = hashlib.sha256()
    base = assets_dir() / "templates"
    for path in sorted(base.rglob("*.tmpl")):
        h.update(path.relative_to(base).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()
