"""Deploy plans (docs/reference-deploy.md#env-deploy).

A plan has a digest over its content, the current promotion id it read, a direction (`BEHIND`
for an older release; no rollback exists: an older release is an ordinary deploy), each image classified
`unchanged`/`changed`/`added`/`removed` with both digests where they differ, and the commits
between the two releases. `None` means no plan could be computed — not "no changes".
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from engine.releases.git import commits_between

STOP_CLASS = {"workload_removed"}  # findings that need --acknowledge-destructive


class ImageChange(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    name: str
    change: str  # unchanged | changed | added | removed
    from_digest: str | None = None
    to_digest: str | None = None


class Finding(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    code: str
    severity: str  # stop | warn
    message: str


class DeployPlan(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    digest: str
    env: str
    release: str
    current_promotion_id: str | None
    current_release: str | None
    direction: str  # INITIAL | AHEAD | BEHIND | SAME
    images: list[ImageChange]
    commits: list[dict[str, str]]
    findings: list[Finding] = []

    @property
    def stop_codes(self) -> list[str]:
        return sorted({f.code for f in self.findings if f.severity == "stop"})


def classify(current: dict[str, dict[str, Any]], target: dict[str, dict[str, Any]]) -> list[ImageChange]:
    out = []
    for name in sorted(set(current) | set(target)):
        old = (current.get(name) or {}).get("digest")
        new = (target.get(name) or {}).get("digest")
        if name not in current:
            out.append(ImageChange(name=name, change="added", to_digest=new))
        elif name not in target:
            out.append(ImageChange(name=name, change="removed", from_digest=old))
        elif old == new:
            out.append(ImageChange(name=name, change="unchanged", from_digest=old, to_digest=new))
        else:
            out.append(ImageChange(name=name, change="changed", from_digest=old, to_digest=new))
    return out


def _is_ancestor(root: Path, older: str, newer: str) -> bool | None:
    try:
        rc = subprocess.run(
            ["git", "merge-base", "--is-ancestor", older, newer], cwd=root, capture_output=True, timeout=30
        ).returncode
    except (OSError, subprocess.TimeoutExpired):
        return None
    return {0: True, 1: False}.get(rc)


def direction_of(root: Path | None, target: dict[str, Any], current: dict[str, Any] | None) -> str:
    """BEHIND when the target is older than what runs: by git ancestry, else by cut time."""
    if current is None:
        return "INITIAL"
    if target["version"] == current["version"]:
        return "SAME"
    tc, cc = (target.get("provenance") or {}).get("commit"), (current.get("provenance") or {}).get("commit")
    if root is not None and tc and cc and tc != cc:
        if _is_ancestor(root, tc, cc):
            return "BEHIND"
        if _is_ancestor(root, cc, tc):
            return "AHEAD"
    return "BEHIND" if target["created_at"] < current["created_at"] else "AHEAD"


def plan_digest(content: dict[str, Any]) -> str:
    body = json.dumps(content, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + hashlib.sha256(body).hexdigest()


def compute_plan(
    env: str,
    target: dict[str, Any],
    target_images: dict[str, dict[str, Any]],
    current_promotion: dict[str, Any] | None,
    current_release: dict[str, Any] | None,
    root: Path | None = None,
) -> DeployPlan | None:
    """`target`/`current_release` are release documents; None when the running release is unknown here."""
    if current_promotion is not None and current_release is None:
        return None  # the running release is not in this checkout: no plan can be computed
    images = classify(current_promotion["images"] if current_promotion else {}, target_images)
    direction = direction_of(root, target, current_release)
    commits = []
    if root is not None and current_release is not None:
        commits = commits_between(
            root,
            (current_release.get("provenance") or {}).get("commit"),
            (target.get("provenance") or {}).get("commit"),
        )
    findings = [
        Finding(
            code="workload_removed",
            severity="stop",
            message=f"workload {i.name!r} is no longer declared and will be stopped",
        )
        for i in images
        if i.change == "removed"
    ]
    if direction == "BEHIND":
        findings.append(
            Finding(
                code="behind",
                severity="warn",
                message=f"{target['version']} is older than the running {current_release['version']}"
                if current_release
                else "older release",
            )
        )
    content = {
        "env": env,
        "release": target["version"],
        "current_promotion_id": current_promotion["id"] if current_promotion else None,
        "current_release": current_release["version"] if current_release else None,
        "direction": direction,
        "images": [i.model_dump() for i in images],
        "commits": commits,
        "findings": [f.model_dump() for f in findings],
    }
    return DeployPlan(digest=plan_digest(content), **content)


def render_plan_markdown(plan: DeployPlan | None, env: str, next_step: str | None) -> str:
    """Human plan that reads well pasted into a pull request."""
    if plan is None:
        return (
            f"### Deploy plan for `{env}`\n\nNo plan could be computed (the running release is not known "
            f'to this checkout). This is not "no changes".\n\nNext: `{next_step}`\n'
        )
    lines = [
        f"### Deploy plan for `{env}`: `{plan.current_release or '(nothing)'}` -> `{plan.release}` "
        f"({plan.direction})",
        "",
        f"- plan digest: `{plan.digest}`",
        f"- current promotion: `{plan.current_promotion_id or 'none'}`",
        "",
        "| workload | change | from | to |",
        "|---|---|---|---|",
    ]
    short = lambda d: (d or "-").replace("sha256:", "")[:12]  # noqa: E731
    for img in plan.images:
        lines.append(f"| {img.name} | {img.change} | `{short(img.from_digest)}` | `{short(img.to_digest)}` |")
    if plan.commits:
        lines += ["", f"Commits ({len(plan.commits)}):"]
        lines += [f"- `{c['commit'][:10]}` {c['subject']}" for c in plan.commits[:50]]
    for f in plan.findings:
        lines.append(f"\n> **{f.severity}** `{f.code}`: {f.message}")
    if next_step:
        lines += ["", f"Next: `{next_step}`"]
    return "\n".join(lines) + "\n"
