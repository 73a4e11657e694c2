"""Processes a debug session launched: found by the session's marker in /proc/<pid>/environ.

Every process the adapter starts inherits `FRAMEWORK_DEBUG_SESSION=<token>` (a random token
per session), so the set is exact: an attached process never carries it and is never signalled.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

MARKER = "FRAMEWORK_DEBUG_SESSION"  # in the adapter's environment, inherited by all it starts


def marked(token: str) -> list[int]:
    """Live processes carrying this session's marker (never this process)."""
    from engine.runtime.process import read_markers

    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        marks = read_markers(int(entry.name))
        if marks and marks.get(MARKER) == token:
            found.append(int(entry.name))
    return sorted(found)


def alive(pid: int) -> bool:
    """A live process (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text(errors="replace").rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def kill_marked(token: str, grace: float = 3.0) -> list[int]:
    """SIGTERM every marked process, SIGKILL the ones left after `grace`; returns the pids signalled."""
    pids = marked(token)
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        for pid in pids:
            if alive(pid):
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(alive(p) for p in pids):
            time.sleep(0.02)
        if not any(alive(p) for p in pids):
            break
        pids = sorted(set(pids) | set(marked(token)))  # a child started meanwhile
    return pids
