"""Templates shipped in assets/templates (string.Template: `$name`; Go code never uses `$`). A template is
rendered in the version `template_versions.rendering` selects (default: this framework's)."""

from __future__ import annotations

from functools import cache
from string import Template

from engine.authoring import template_versions


@cache
def _template(rel: str, version: str) -> Template:
    return Template(template_versions.template_path(rel, version).read_text(encoding="utf-8"))


def render(rel: str, **values: object) -> str:
    return _template(rel, template_versions.active()).substitute({k: str(v) for k, v in values.items()})


def templates_digest(version: str | None = None) -> str:
    """One hash over every template of `version`: a new framework release regenerates even when inputs did not
    change."""
    return template_versions.digest(version)
