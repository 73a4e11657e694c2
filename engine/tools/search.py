"""Search tools (docs/reference-tools.md#tools-parameters-defaults-and-limits): grep and glob, both on ripgrep
(`rg` from the PyPI package)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from engine.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    boolean,
    clamp,
    integer,
    schema,
    string,
)

GLOB_DEFAULT_LIMIT = 200
GREP_MAX_OUTPUT = 32 * 1024
# Hidden files are searched (e.g. .github/), the .git directory never; symlinks are followed and
# rg reports loops instead of hanging on them.
COMMON_ARGS = ("--no-config", "--hidden", "--follow", "--glob", "!.git")


@cache
def rg_path() -> str:
    """`rg` installed beside this interpreter by the `ripgrep` package, else the one on PATH."""
    here = Path(sys.executable).parent / "rg"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    found = shutil.which("rg")
    if not found:
        raise ToolError("ripgrep (rg) is not installed: pip install ripgrep==14.1.0")
    return found


def run_rg(args: list[str], cwd: Path) -> tuple[int, str, str]:
    proc = subprocess.run([rg_path(), *args], cwd=cwd, capture_output=True, text=True, errors="replace")
    return proc.returncode, proc.stdout, proc.stderr


def _search_dir(ctx: ToolContext, path: str | None) -> Path:
    where = ctx.resolve(path)
    if not where.exists():
        raise ToolError(f"path not found: {where}", code="not_found")
    return where


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()][:20]


def _cap(text: str, limit: int) -> tuple[str, bool]:
    if len(text.encode("utf-8")) <= limit:
        return text, False
    cut = text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
    return cut[: cut.rfind("\n") + 1], True


def _by_mtime(paths: list[str], cwd: Path) -> list[str]:
    def key(p: str) -> float:
        try:
            return (cwd / p).stat().st_mtime
        except OSError:
            return 0.0

    return sorted(paths, key=key, reverse=True)


def grep(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    where = _search_dir(ctx, params.get("path"))
    mode = params.get("output_mode") or "files_with_matches"
    args = [*COMMON_ARGS, "--color", "never"]
    if mode == "files_with_matches":
        args.append("--files-with-matches")
    elif mode == "count":
        args += ["--count", "--with-filename"]
    elif mode == "content":
        args += ["--line-number", "--no-heading", "--with-filename"]
        for flag in ("-A", "-B", "-C"):
            if params.get(flag) is not None:
                args += [flag, str(int(params[flag]))]
    else:
        raise ToolError(f"output_mode must be files_with_matches, content or count, not {mode!r}")
    if params.get("-i"):
        args.append("--ignore-case")
    if params.get("word_boundary"):
        args.append("--word-regexp")
    if params.get("fixed_strings"):
        args.append("--fixed-strings")
    if params.get("multiline"):
        args += ["--multiline", "--multiline-dotall"]
    if params.get("glob"):
        args += ["--glob", params["glob"]]
    if params.get("type"):
        args += ["--type", params["type"]]
    # `-e` keeps a pattern that begins with '-' from being read as a flag (grep's pattern is a regex).
    args += ["-e", params["pattern"]]
    if where != ctx.root:
        args += ["--", os.path.relpath(where, ctx.root) if where.is_relative_to(ctx.root) else str(where)]
    code, out, err = run_rg(args, ctx.root)
    if code == 2 and not out:
        raise ToolError("grep failed: " + " ".join(_warnings(err)) or "rg exited 2")
    lines = out.splitlines()
    if mode == "files_with_matches":
        lines = _by_mtime(lines, ctx.root)
    total = len(lines)
    limit = params.get("head_limit")
    if limit is not None:
        lines = lines[: max(0, int(limit))]
    text, capped = _cap("".join(line + "\n" for line in lines), GREP_MAX_OUTPUT)
    if total == 0:
        text = "No matches found\n"
    elif len(lines) < total:
        text += f"[{total - len(lines)} more result(s) not shown (head_limit {limit})]\n"
    if capped:
        text += f"[output capped at {GREP_MAX_OUTPUT // 1024} KB; narrow the search or use head_limit]\n"
    warnings = _warnings(err)
    if warnings:
        text += "warnings:\n" + "".join(f"  {w}\n" for w in warnings)
    return ToolResult(
        output=text, data={"mode": mode, "results": lines, "total": total, "warnings": warnings}
    )


def list_files(ctx: ToolContext, where: Path, pattern: str | None = None) -> list[Path]:
    """Files under `where` (gitignore respected, .git skipped), matching a glob relative to `where`."""
    from wcmatch import glob as wglob

    code, out, err = run_rg(["--files", *COMMON_ARGS], where)
    if code == 2 and not out:
        raise ToolError("listing files failed: " + " ".join(_warnings(err)))
    rel = out.splitlines()
    if pattern:
        flags = wglob.GLOBSTAR | wglob.BRACE | wglob.EXTGLOB | wglob.DOTGLOB
        rel = [p for p in rel if wglob.globmatch(p, pattern, flags=flags)]
    return [where / p for p in rel]


def glob(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    where = _search_dir(ctx, params.get("path"))
    if not where.is_dir():
        raise ToolError(f"{where} is not a directory")
    limit = clamp(params.get("head_limit"), GLOB_DEFAULT_LIMIT, 100000, minimum=1)
    files = list_files(ctx, where, params["pattern"])
    shown = [os.path.relpath(p, ctx.root) if p.is_relative_to(ctx.root) else str(p) for p in files]
    shown = _by_mtime(shown, ctx.root)
    total = len(shown)
    shown = shown[:limit]
    text = "".join(p + "\n" for p in shown) or "No files found\n"
    if total > limit:
        text += f"[{total - limit} more file(s) not shown (head_limit {limit})]\n"
    return ToolResult(output=text, data={"files": shown, "total": total})


TOOLS = [
    Tool(
        "grep",
        ("search", "readonly", "default"),
        "Search file contents with a regex (ripgrep). files_with_matches are sorted newest first.",
        schema(
            {
                "pattern": string("regex (or literal with fixed_strings)"),
                "path": string("file or directory; default the working directory"),
                "glob": string("file filter, e.g. *.py"),
                "type": string("file type filter (e.g. go, ts, py)"),
                "output_mode": string(
                    "files_with_matches (default), content or count",
                    enum=["files_with_matches", "content", "count"],
                ),
                "-A": integer("lines after each match (content mode)", minimum=0),
                "-B": integer("lines before each match (content mode)", minimum=0),
                "-C": integer("lines around each match (content mode)", minimum=0),
                "-i": boolean("case-insensitive"),
                "word_boundary": boolean("whole words"),
                "fixed_strings": boolean("literal, no regex"),
                "multiline": boolean("patterns may span lines"),
                "head_limit": integer("limit results", minimum=0),
            },
            ("pattern",),
        ),
        grep,
    ),
    Tool(
        "glob",
        ("search", "readonly", "default"),
        "Find files by name pattern (e.g. **/*.py), newest first; default head_limit 200.",
        schema(
            {
                "pattern": string("glob, e.g. **/*.py"),
                "path": string("directory; default the working directory"),
                "head_limit": integer("max files; default 200", minimum=1, default=200),
            },
            ("pattern",),
        ),
        glob,
    ),
]
