"""One way to ask the real `git` a question: its trimmed stdout, or None when it fails or is absent."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git_output(root: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None
