"""The field's code generators (docs/reference-authoring.md): buf, protoc-gen-go, protoc-gen-connect-go.

Found in `$FRAMEWORK_TOOLS_BIN`, then the checkout's `.tools/bin` (where `make test` installs
the pinned versions), then PATH. The plugins run from buf, so their directory leads PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from engine.errors import EngineError
from engine.paths import pinned_tool

# Pinned with the Makefile (go-tools); the generated go.mod requires the matching runtimes.
BUF_VERSION = "v1.75.0"
PROTOC_GEN_GO_VERSION = "v1.36.11"
CONNECT_VERSION = "v1.19.1"
INSTALL_HINT = "make go-tools   (installs the pinned buf, protoc-gen-go and protoc-gen-connect-go into .tools/bin)"


class ToolMissing(EngineError):
    code = "tool_missing"


class ToolFailed(EngineError):
    code = "tool_failed"


def find(name: str) -> str:
    found = pinned_tool(name)
    if not found:
        raise ToolMissing(f"{name} is not installed", hint=INSTALL_HINT)
    return found


def tool_env() -> dict[str, str]:
    """The environment for buf: the plugins' directory first on PATH."""
    env = dict(os.environ)
    plugin_dir = str(Path(find("protoc-gen-go")).parent)
    connect_dir = str(Path(find("protoc-gen-connect-go")).parent)
    env["PATH"] = os.pathsep.join(dict.fromkeys([plugin_dir, connect_dir, env.get("PATH", "")]))
    return env


def run(argv: list[str], cwd: Path, what: str, env: dict[str, str] | None = None) -> str:
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=600)
    except FileNotFoundError as exc:
        raise ToolMissing(f"{what}: {argv[0]} is not installed", hint=INSTALL_HINT) from exc
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()
        raise ToolFailed(f"{what} failed (exit {proc.returncode})" + (f":\n{detail[-3000:]}" if detail else ""))
    return proc.stdout


def go() -> str:
    found = shutil.which("go")
    if not found:
        raise ToolMissing("the Go toolchain (`go`) is not installed", hint="install Go from https://go.dev/dl")
    return found
