"""The repository speaks its own words: it cites the reference pages under docs/ (with heading
anchors that exist), never documents a reader of the repository cannot open.

House style (docs/architecture.md, "where things go"): comments, docstrings, test docstrings,
templates and docs cite `docs/reference-*.md` (or docs/architecture.md) or state the rule by name
in words. The numbered spec documents live outside the repository and the issue tracker is not
carried with it, so a citation of either is a dead end for a reader.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

from tests.conftest import REPO

# What the rules cover: everything a reader of the repository (or of a generated project) reads.
SCOPE = ("app", "engine", "screens", "tests", "bench", "assets", "docs", "examples",
         "README.md", "Makefile", "pyproject.toml")
SKIPPED_DIRS = ("tests/__snapshots__/",)

# A wrapped line may split a citation: "(spec" at one line's end, "# 2, Deploy)" on the next.
_WRAP = r"(?:[ \t]*\n[ \t]*(?:#+|//|--|\*|>)?)?[ \t]*"
# Built from pieces so that this file does not match itself.
_SPEC_WORD = "sp" + "ec"
_ISSUE_WORD = "iss" + "ue"
NUMBERED_SPEC = re.compile(
    r"\b" + _SPEC_WORD + r"(?:s|ification)?" + _WRAP + r"(?:[:,]?[ \t]*documents?[ \t]*)?(?:no\.?[ \t]*)?#?[0-9]",
    re.IGNORECASE)
NUMBERED_ISSUE = re.compile(r"\b" + _ISSUE_WORD + r"s?" + _WRAP + r"[_-]?(?:#|no\.?[ \t]*)?[0-9]", re.IGNORECASE)

# `docs/<page>.md` with an optional `#<anchor>`; not a path that merely ends in docs/ (a project's own
# docs/ folder in a fixture is `.../docs/x.md`).
DOC_CITATION = re.compile(r"(?<![\w/.-])docs/([A-Za-z0-9_.-]+\.md)(?:#([A-Za-z0-9_-]+))?")
# Inside docs/ (and README.md) relative Markdown links: `](reference-deploy.md#env-deploy)`.
RELATIVE_LINK = re.compile(r"\]\((?:\./)?([A-Za-z0-9_-]+\.md)(?:#([A-Za-z0-9_-]+))?\)")
# Pages of the project whose mere mention (without an anchor) must name a file that exists.
PROJECT_PAGE = re.compile(r"(?:reference-[a-z0-9-]+|architecture)\.md")


def _files() -> Iterator[tuple[str, str]]:
    """Every text file in scope, tracked or new (not ignored), as (path relative to the repo, text)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *SCOPE],
                            cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    for rel in sorted({name for name in listed if name}):
        if rel.startswith(SKIPPED_DIRS):
            continue
        path = REPO / rel
        if not path.is_file():
            continue  # deleted in the working tree, or a symlink to a directory
        raw = path.read_bytes()
        if b"\0" in raw:
            continue  # binary
        try:
            yield rel, raw.decode("utf-8")
        except UnicodeDecodeError:
            continue  # binary


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def github_anchor(heading: str) -> str:
    """GitHub's heading anchor: the rendered text lower-cased, punctuation dropped, spaces -> '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link renders as its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """The anchors of a page's headings (ATX headings outside code fences), duplicates numbered as GitHub does."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    fence: str | None = None
    for line in markdown.splitlines():
        stripped = line.lstrip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if marker:
            if fence is None:
                fence = marker.group(1)[0]
            elif stripped.startswith(fence * 3):
                fence = None
            continue
        if fence is not None:
            continue
        heading = re.match(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", line)
        if not heading:
            continue
        slug = github_anchor(heading.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def test_github_anchor_follows_githubs_rules() -> None:
    """The anchor rule the citations are checked with: GitHub's (lower-case, spaces -> '-', punctuation
    dropped, underscores and hyphens kept, repeated headings numbered)."""
    assert github_anchor("Exit codes") == "exit-codes"
    assert github_anchor("`env status --signal <name>`") == "env-status---signal-name"
    assert github_anchor("Data dir (mode 0700)") == "data-dir-mode-0700"
    assert github_anchor("A hosted frontend's files") == "a-hosted-frontends-files"
    assert github_anchor("`dev_stack.max_stacks` [limits](x.md)") == "dev_stackmax_stacks-limits"
    page = "# Title\n## Commands\n```sh\n# not a heading\n```\n## Commands\n### Exit codes ##\n"
    assert anchors(page) == {"title", "commands", "commands-1", "exit-codes"}


def test_no_citation_of_a_numbered_spec_document_or_an_issue_number() -> None:
    """House style (docs/architecture.md, "where things go"): no file a reader gets cites the numbered spec
    documents or issue numbers (neither ships with the repository); cite docs/reference-*.md or state the
    rule in words instead."""
    files = list(_files())
    assert any(rel.startswith("engine/") for rel, _ in files) and any(rel.startswith("docs/") for rel, _ in files)
    found = [f"{rel}:{_line(text, m.start())}: {m.group(0)!r}"
             for rel, text in files for rx in (NUMBERED_SPEC, NUMBERED_ISSUE) for m in rx.finditer(text)]
    assert not found, f"{len(found)} citation(s) of a spec document or an issue number:\n" + "\n".join(found)


def test_the_pattern_catches_the_forms_a_citation_takes() -> None:
    """The check above catches what it is for (a pattern that matched nothing would pass vacuously), and
    leaves alone words that only look alike (a Kubernetes `spec:`, a variable named `spec`)."""
    spec, issue = _SPEC_WORD, _ISSUE_WORD
    cited = [f"({spec} 2, framework env)", f"{spec.title()} 3, Errors 5", f"{spec} 1's rule",
             f"({spec}\n    # 2, Deploy)", f"{spec.title()} document 2", f"{spec.title()}: document 3",
             f"{issue} 19", f"end {issue} 8b", f"{issue} #16", f"({issue}\n15's permission list)", f"{issue}-16"]
    for text in cited:
        assert NUMBERED_SPEC.search(text) or NUMBERED_ISSUE.search(text), text
    alike = (f"{spec}: {{replicas: 2}}", f"{spec} = obj.get('{spec}')", f"the {spec} names none", f"{issue}s with 0")
    for text in alike:
        assert not NUMBERED_SPEC.search(text) and not NUMBERED_ISSUE.search(text), text


def test_every_cited_docs_page_and_anchor_exists() -> None:
    """Citations stay valid (house style, docs/architecture.md "where things go"): every
    `docs/<page>.md#<anchor>` cited anywhere names an existing page and a heading anchor in it, as
    do relative links between the pages; a project page named without an anchor exists."""
    docs = REPO / "docs"
    pages = {p.name: anchors(p.read_text(encoding="utf-8")) for p in docs.glob("*.md")}
    assert "reference-deploy.md" in pages and "exit-codes" in pages["reference-devstack.md"]
    broken: list[str] = []
    cited = 0
    for rel, text in _files():
        found = list(DOC_CITATION.finditer(text))
        if rel.startswith("docs/") or rel == "README.md":
            found += RELATIVE_LINK.finditer(text)
        for m in found:
            page, anchor = m.group(1), m.group(2)
            if anchor is None and not PROJECT_PAGE.fullmatch(page):
                continue  # some other project's docs/ (a fixture's), named without an anchor
            cited += 1
            where = f"{rel}:{_line(text, m.start())}: {m.group(0)}"
            if page not in pages:
                broken.append(f"{where}: no page docs/{page}")
            elif anchor is not None and anchor not in pages[page]:
                broken.append(f"{where}: no heading with anchor #{anchor} in docs/{page}")
    assert cited, "no citation of a docs page found: the scan is not looking where the citations are"
    assert not broken, "\n".join(broken)
