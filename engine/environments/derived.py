"""The derived render options: computed by the tool for every render, never set on the command line
(docs/reference-env.md#render-options). Standard library only: `env list`'s warm path and the
deploy's render read them without importing pydantic (bench/startup.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from engine.project import Project

DERIVED_OPTIONS = ("env", "namespace", "image_tag", "image_digests", "worktree", "branch")
DEFAULT_IMAGE_TAG = "dev"


def _git_dir(root: Path) -> Path | None:
    dot = root / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():  # a linked worktree: "gitdir: <path>"
        text = dot.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            return (root / text.split(":", 1)[1].strip()).resolve()
    return None


def checkout_facts(root: Path) -> tuple[str, str]:
    """(worktree key, branch) of the checkout holding `root`; the primary checkout's key is ""."""
    for candidate in (root, *root.parents):
        git = _git_dir(candidate)
        if git is None:
            continue
        worktree = candidate.name if (candidate / ".git").is_file() else ""
        try:
            head = (git / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            return worktree, ""
        branch = head.removeprefix("ref: refs/heads/") if head.startswith("ref: ") else ""
        return worktree, branch
    return "", ""


def dns_label(text: str) -> str:
    label = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return label[:63].rstrip("-") or "default"


def derived_options(
    project: Project,
    env: str,
    *,
    image_tag: str | None = None,
    image_digests: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The options the tool computes for every render (the derived options: env, namespace, image_tag ...)."""
    worktree, branch = checkout_facts(project.root)
    return {
        "env": env,
        "namespace": dns_label(f"{project.key}-{env}"),
        "image_tag": image_tag or DEFAULT_IMAGE_TAG,
        "image_digests": json.dumps(dict(sorted((image_digests or {}).items())), separators=(",", ":")),
        "worktree": worktree,
        "branch": branch,
    }
