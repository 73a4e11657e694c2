"""The worktree tool (docs/reference-tools.md#tools-parameters-defaults-and-limits): create, list, get, delete git
worktrees.

Worktrees live in `<repo>/.worktrees/<name>` (listed in `.git/info/exclude`, so the main
checkout stays clean); what git does not know (the associated session, whether the branch was
generated) is kept in `<repo>/.worktrees/.meta/<name>.json`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from engine.paths import atomic_write_bytes
from engine.tools.base import Tool, ToolContext, ToolError, ToolResult, boolean, schema, string

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def _git(args: list[str], cwd: Path, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise ToolError(f"git {' '.join(args)} failed: {(proc.stderr or proc.stdout).strip()}")
    return proc.stdout


def _repo(ctx: ToolContext) -> Path:
    proc = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=ctx.root,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise ToolError(f"{ctx.root} is not inside a git repository", code="not_a_repository")
    return Path(proc.stdout.strip()).parent  # the main checkout, even when called from a worktree


def _meta_path(repo: Path, name: str) -> Path:
    return repo / ".worktrees" / ".meta" / f"{name}.json"


def _meta(repo: Path, name: str) -> dict[str, Any]:
    try:
        return dict(json.loads(_meta_path(repo, name).read_text()))
    except (OSError, ValueError):
        return {}


def _worktrees(repo: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for line in _git(["worktree", "list", "--porcelain"], repo).splitlines() + [""]:
        if not line:
            if current:
                out.append(current)
            current = {}
            continue
        key, _, value = line.partition(" ")
        current[key] = value or True
    rows = []
    for wt in out:
        path = Path(str(wt["worktree"]))
        managed = path.parent == repo / ".worktrees"
        name = path.name if managed else ("(main)" if path == repo else path.name)
        branch = str(wt.get("branch", "")).removeprefix("refs/heads/") or None
        rows.append(
            {
                "name": name,
                "path": str(path),
                "branch": branch,
                "head": wt.get("HEAD"),
                "managed": managed,
                "session_id": _meta(repo, name).get("session_id") if managed else None,
            }
        )
    return rows


def _find(repo: Path, name: str) -> dict[str, Any]:
    for wt in _worktrees(repo):
        if wt["managed"] and wt["name"] == name:
            return wt
    raise ToolError(f"no worktree named {name!r}; list them with action=list", code="not_found")


def _exclude(repo: Path) -> None:
    exclude = repo / ".git" / "info" / "exclude"
    if exclude.parent.is_dir():
        text = exclude.read_text() if exclude.exists() else ""
        if "/.worktrees/" not in text.splitlines():
            exclude.write_text(text + ("" if text.endswith("\n") or not text else "\n") + "/.worktrees/\n")


def _create(params: dict[str, Any], ctx: ToolContext, repo: Path, name: str) -> ToolResult:
    path = repo / ".worktrees" / name
    existing = [w for w in _worktrees(repo) if w["path"] == str(path)]
    if existing or path.exists():
        if not params.get("force"):
            raise ToolError(f"worktree {name!r} already exists at {path}; pass force to recreate it")
        _git(["worktree", "remove", "--force", str(path)], repo, check=False)
        shutil.rmtree(path, ignore_errors=True)
        _git(["worktree", "prune"], repo, check=False)
    _exclude(repo)
    generated = not params.get("branch")
    branch = params.get("branch") or f"wt/{name}"
    base = params.get("base_branch") or "HEAD"
    branch_exists = (
        subprocess.run(
            ["git", "show-ref", "--verify", "--quiet", f"refs/heads/{branch}"], cwd=repo
        ).returncode
        == 0
    )
    if branch_exists and not params.get("base_branch") and not (params.get("force") and generated):
        _git(["worktree", "add", str(path), branch], repo)
    else:
        _git(["worktree", "add", "-B" if branch_exists else "-b", branch, str(path), base], repo)
    copied = []
    for rel in params.get("copy_files") or []:
        src = (repo / rel).resolve()
        if not src.is_relative_to(repo) or not src.exists():
            raise ToolError(f"copy_files: {rel} is not a file in the repository")
        dst = path / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)
        copied.append(rel)
    meta = {
        "name": name,
        "branch": branch,
        "generated_branch": generated,
        "base": base,
        "session_id": params.get("session_id") or ctx.session_id,
        "created_at": time.time(),
    }
    atomic_write_bytes(_meta_path(repo, name), json.dumps(meta, indent=1).encode())
    info = _find(repo, name)
    return ToolResult(
        output=f"created worktree {name} at {path} on branch {branch}"
        + (f"; copied {', '.join(copied)}" if copied else "")
        + "\n",
        data={**info, "copied": copied},
    )


def worktree(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    action = params["action"]
    repo = _repo(ctx)
    if action == "list":
        rows = _worktrees(repo)
        if params.get("session_id"):
            rows = [r for r in rows if r["session_id"] == params["session_id"]]
        text = "".join(f"{r['name']}  {r['branch'] or '(detached)'}  {r['path']}\n" for r in rows)
        return ToolResult(output=text or "no worktrees\n", data={"worktrees": rows})
    name = params.get("name")
    if not name:
        raise ToolError(f"worktree action {action!r} needs `name`")
    if not _NAME.match(name):
        raise ToolError(f"worktree name {name!r}: use letters, digits, '.', '_' or '-' (max 64)")
    if action == "create":
        return _create(params, ctx, repo, name)
    if action == "get":
        info = _find(repo, name)
        status = _git(["status", "--porcelain"], Path(info["path"]))
        info["dirty"] = bool(status.strip())
        return ToolResult(
            output=f"{name}: {info['path']} on {info['branch']} at {str(info['head'])[:12]}"
            f"{' (uncommitted changes)' if info['dirty'] else ''}\n",
            data=info,
        )
    if action == "delete":
        info = _find(repo, name)
        args = ["worktree", "remove", *(["--force"] if params.get("force") else []), info["path"]]
        _git(args, repo)
        _meta_path(repo, name).unlink(missing_ok=True)
        return ToolResult(output=f"deleted worktree {name} (branch {info['branch']} kept)\n", data=info)
    raise ToolError(f"unknown action {action!r}: create, list, get or delete")


TOOLS = [
    Tool(
        "worktree",
        ("default",),
        "Manage git worktrees: create (new branch, copy untracked files), list, get, delete.",
        schema(
            {
                "action": string("create, list, get or delete", enum=["create", "list", "get", "delete"]),
                "name": string("worktree name; required for create, get, delete"),
                "branch": string("branch; auto-generated (wt/<name>) when omitted"),
                "base_branch": string("branch or commit to start from; default HEAD"),
                "copy_files": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "files to copy into the worktree (e.g. .env)",
                },
                "force": boolean("force: recreate an existing worktree / delete with local changes"),
                "session_id": string("session to associate"),
            },
            ("action",),
        ),
        worktree,
    ),
]
