"""Go programs of the framework's assets, built once and cached by the hash of their sources: the lint
analyzers' vet tool (assets/lint/go, docs/reference-lint.md#linters) and `project shapes`' go/ast reader
(assets/inspect/go, docs/reference-project.md#project-shapes). Light on purpose: `project shapes` imports it
on its warm path.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from engine.errors import EngineError
from engine.paths import cache_dir


class LinterCannotRun(EngineError):
    """A linter that cannot run is exit 2, named (docs/reference-lint.md#exit-codes)."""

    exit_code = 2
    code = "linter_cannot_run"


def source_hash(src: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in src.rglob("*") if p.is_file()):  # packages in subdirectories too
        h.update(path.relative_to(src).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def go_binary() -> str:
    import shutil

    found = shutil.which("go")
    if not found:
        raise LinterCannotRun("go vet: the Go toolchain (`go`) is not installed", hint="install Go from https://go.dev/dl")
    return found


def lint_cache() -> Path:
    """`$FRAMEWORK_LINT_CACHE`, default `<user cache>/framework/lint`: the vet tool and the results cache."""
    override = os.environ.get("FRAMEWORK_LINT_CACHE")
    return Path(override) if override else cache_dir() / "lint"


def tools_dir() -> Path:
    """Where the built tools live (these Go programs, golangci-lint with the analyzers), each named by the hash of
    its sources: `$FRAMEWORK_LINT_TOOLS`, default the lint cache (docs/reference-lint.md#cache)."""
    override = os.environ.get("FRAMEWORK_LINT_TOOLS")
    return Path(override) if override else lint_cache()


def go_tool(src: Path, name: str, what: str, hint: str | None = None) -> Path:
    """The Go program whose sources are `src`, built once into the tools directory as `<name>-<hash of its
    sources>` (offline from the module cache when the proxy is unreachable): a changed source is a new build."""
    binary = tools_dir() / f"{name}-{source_hash(src)}"
    if binary.is_file():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    tmp = binary.with_name(f"{binary.name}.{os.getpid()}.tmp")
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOWORK": "off"}
    proc = subprocess.run([go_binary(), "build", "-o", str(tmp), "."], cwd=src, capture_output=True, text=True,
                          env=env, timeout=600)
    if proc.returncode != 0:
        raise LinterCannotRun(f"{what} failed:\n{proc.stderr.strip()[-2000:]}", hint=hint)
    os.replace(tmp, binary)
    return binary
