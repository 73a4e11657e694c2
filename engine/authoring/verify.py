"""`framework ci verify-generated` (docs/reference-authoring.md#commands): every generated file's marker matches
its content; regenerating in a throwaway copy changes nothing (freshness); the commit policy holds (framework.yaml
`generate.commit`: true = generated files are tracked by git, false = they are ignored). Each
offending file is named; any finding exits non-zero.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from pydantic import BaseModel

from engine.authoring import markers, ownership, sandbox
from engine.authoring.annotation_spec import OPTIONS_PROTO
from engine.authoring.config import load
from engine.authoring.generate import STATE, generate, state_files
from engine.project import Project


class Finding(BaseModel):
    path: str
    check: str  # marker | freshness | commit-policy
    problem: str


class VerifyResult(BaseModel):
    checked: int = 0
    findings: list[Finding] = []
    policy: str = "committed"
    policy_checked: bool = True
    notes: list[str] = []


def generated_files(root: Path) -> list[str]:
    """Files carrying a marker, plus those the last generation recorded (a deleted one counts)."""
    found = set()
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if path.is_file() and not sandbox.SKIP & set(rel.parts) and rel.parts[0] != ".framework":
            if path.suffix in (".go", ".json", ".k", ".yaml", ".yml", ".proto", ".md", ".sql", ".toml", ".ts"):
                try:
                    if markers.has_marker(path.read_text(encoding="utf-8")):
                        found.add(rel.as_posix())
                except (UnicodeDecodeError, OSError):
                    continue
    found |= set(state_files(root))
    return sorted(found)


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


def verify_generated(project: Project) -> VerifyResult:
    root = project.root
    cfg = load(project)
    gone = {d.path for d in ownership.disowned(root)}
    files = [p for p in generated_files(root) if p not in gone]
    result = VerifyResult(checked=len(files), policy="committed" if cfg.commit_generated else "ignored")
    for rel in files:
        path = root / rel
        if not path.is_file():
            result.findings.append(Finding(path=rel, check="marker", problem="missing (generated, then deleted)"))
            continue
        state = markers.check(rel, path.read_text(encoding="utf-8"))
        if state != "ok":
            problem = "edited by hand: its content no longer matches its hash marker" if state == "mismatch" \
                else "no hash marker"
            result.findings.append(Finding(path=rel, check="marker", problem=problem))
    with tempfile.TemporaryDirectory(prefix="framework-verify-") as tmp:
        copy = sandbox.copy(root, Path(tmp) / "copy")
        generate(Project(copy), full=True, by="ci verify-generated")
        for rel, change in sandbox.diff(root, copy):
            if rel == STATE.as_posix() or rel.startswith(".framework/"):
                continue
            if rel in gone:
                continue
            if change == "created" or rel in files or markers.has_marker((copy / rel).read_text(encoding="utf-8")
                                                                         if (copy / rel).is_file() else ""):
                problem = {"created": "not generated yet (run framework generate)",
                           "removed": "no longer generated (stale)",
                           "modified": "differs from a fresh generation"}[change]
                if not any(f.path == rel and f.check == "marker" for f in result.findings):
                    result.findings.append(Finding(path=rel, check="freshness", problem=problem))
    # The vendored framework/v1/options.proto is an input the user's protos import: always committed
    # (docs/reference-lint.md#markers), whatever generate.commit says.
    vendored = f"{cfg.proto_dir}/{OPTIONS_PROTO}"
    _policy(root, [f for f in files if f != vendored], cfg.commit_generated, result)
    return result


def _policy(root: Path, files: list[str], commit: bool, result: VerifyResult) -> None:
    probe = _git(root, "rev-parse", "--show-toplevel")
    if probe.returncode != 0:
        result.policy_checked = False
        result.notes.append("not a git checkout: the commit policy was not checked")
        return
    present = [f for f in files if (root / f).is_file()]
    tracked = set(_git(root, "ls-files", "--", *present).stdout.splitlines()) if present else set()
    ignored = set(_git(root, "check-ignore", "--no-index", "--", *present).stdout.splitlines()) if present else set()
    for rel in present:
        if commit and rel not in tracked:
            result.findings.append(Finding(path=rel, check="commit-policy",
                                           problem="generated files are committed (generate.commit: true), "
                                                   "and this one is not tracked"))
        elif not commit and (rel in tracked or rel not in ignored):
            result.findings.append(Finding(path=rel, check="commit-policy",
                                           problem="generated files are ignored (generate.commit: false), and this "
                                                   "one is " + ("tracked" if rel in tracked else "not ignored")))
