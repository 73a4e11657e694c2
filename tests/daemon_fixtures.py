"""Daemon instance directories for tests: a real child process holding the advisory lock (flock),
a leftover runtime record, and an instance running without a record (`platform daemon ls`:
docs/reference-webhooks.md#daemon-instances-platform-daemon-ls-daemon-screen-key-5)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HOLDER = """
import fcntl, sys
held = []
for path in sys.argv[1:]:
    f = open(path, "a+")
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    held.append(f)
print("locked", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def instances(isolated_home: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """~/.platform/instances with `main` (locked, record awaiting_credentials), `old` (record and a
    lock file nobody holds: leftover) and `starting` (locked, no record yet)."""
    root = isolated_home / ".platform" / "instances"
    for name in ("main", "old", "starting"):
        (root / name).mkdir(parents=True)
        (root / name / "instance.lock").touch()
    (root / "main" / "runtime.json").write_text(json.dumps({"state": "awaiting_credentials", "pid": 1}))
    (root / "old" / "runtime.json").write_text(json.dumps({"state": "connected"}))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root / "main" / "instance.lock"), str(root / "starting" / "instance.lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    yield root, holder
    if holder.poll() is None:
        holder.kill()
    holder.wait(10)
