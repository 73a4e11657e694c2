"""Every command the reference pages name exists: docs/*.md and README.md stay honest.

Each `framework ...` / `platform ...` named in backticks resolves to a registered command that
answers `--help` with exit 0 (README.md#output-and-exit-codes), and nothing a "Not in this build" section lists
is in fact registered (docs/reference-auth.md once said `cloud releases` was not registered).
"""

from __future__ import annotations

import io
import re
import sys
from typing import Any

import pytest

from app.cli import build
from app.main import run
from tests.conftest import REPO

SPAN = re.compile(r"`((?:framework|platform)(?: [^`]*)?)`")
WORD = re.compile(r"^[a-z][a-z0-9-]*$")
# Backticked text that quotes a program's output rather than naming a command.
OUTPUT_QUOTES = {"platform server listening on http://HOST:PORT"}
PAGES = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]


def _spans(text: str) -> list[str]:
    return [m.group(1) for m in SPAN.finditer(text) if m.group(1) not in OUTPUT_QUOTES]


def resolve(span: str, roots: dict[str, Any]) -> tuple[list[str], str | None]:
    """(program + command path, the first word that names no command of a group, or None)."""
    words = span.split()
    program, rest = words[0], words[1:]
    if program == "platform" and rest[:1] == ["framework"]:  # `platform framework ...` is the framework program
        program, rest = "framework", rest[1:]
    command, path = roots[program], [program]
    for word in rest:
        subs = getattr(command, "commands", None)
        if not subs or not WORD.match(word):
            break  # a leaf's arguments, a flag, a placeholder, prose
        if word not in subs:
            return path, word
        command, path = subs[word], [*path, word]
    return path, None


@pytest.fixture(scope="module")
def roots() -> dict[str, Any]:
    return {"framework": build("framework"), "platform": build("platform")}


def test_every_command_a_reference_page_names_answers_help(roots: dict[str, Any],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """README.md#output-and-exit-codes: every `framework ...`/`platform ...` a reference page names is a registered
    command whose `--help` exits 0 (a renamed or removed command fails here, naming the page)."""
    paths: dict[tuple[str, ...], str] = {}
    unknown = []
    for page in PAGES:
        for span in _spans(page.read_text()):
            path, bad = resolve(span, roots)
            if bad is not None:
                unknown.append(f"{page.name}: `{span}` ({bad!r} is no command of `{' '.join(path)}`)")
            paths.setdefault(tuple(path), page.name)
    assert not unknown, "\n".join(unknown)
    assert len(paths) > 100  # the pages name most of the tree
    failed = []
    for path, page in sorted(paths.items()):
        with monkeypatch.context() as m:
            m.setattr(sys, "stdout", io.StringIO())
            m.setattr(sys, "stderr", io.StringIO())
            code = run(path[0], [*path[1:], "--help"])
            out = sys.stdout.getvalue()
        if code != 0 or "Usage:" not in out:
            failed.append(f"{page}: `{' '.join(path)} --help` exited {code}")
    assert not failed, "\n".join(failed)


def test_not_in_this_build_sections_name_no_registered_command(roots: dict[str, Any]) -> None:
    """README.md#output-and-exit-codes: a "Not in this build" section never lists a command that is registered."""
    stale = []
    for page in PAGES:
        for section in re.split(r"^## ", page.read_text(), flags=re.M):
            if not section.lower().startswith("not in this build"):
                continue
            for span in _spans(section):
                path, bad = resolve(span, roots)
                if bad is None and len(path) > 1:
                    stale.append(f"{page.name}: `{span}` is registered (`{' '.join(path)}`)")
    assert not stale, "\n".join(stale)


def test_reference_pages_do_not_say_shipped_parts_are_missing() -> None:
    """docs/reference-webhooks.md, docs/reference-deploy.md: the daemon and K8sCluster deploys are in this
    build; pages and the daemon's instance module must not say otherwise."""
    texts = {p.name: p.read_text() for p in PAGES}
    texts["engine/daemon/instances.py"] = (REPO / "engine" / "daemon" / "instances.py").read_text()
    for name, text in texts.items():
        flat = " ".join(text.split())
        assert "daemon itself is not in this build" not in flat, name
        assert "does not apply rendered manifests to a cluster" not in flat, name
        assert "the command is not registered" not in flat, name
