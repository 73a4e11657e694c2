"""Processes a debug session launched: found by the session's marker in /proc/<pid>/environ.

Every process the adapter starts inherits `FRAMEWORK_DEBUG_SESSION=<token>` (a random token
per session), so the set is exact: an attached process never carries it and is never signalled.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from engine.processes import environ_markers, pid_alive

MARKER = "FRAMEWORK_DEBUG_SESSION"  # in the adapter's environment, inherited by all it starts


def marked(token: str) -> list[int]:
    """Live processes carrying this session's marker (never this process)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        marks = environ_markers(int(entry.name), MARKER.encode())
        if marks and marks.get(MARKER) == token:
            found.append(int(entry.name))
    return sorted(found)


def kill_marked(token: str, grace: float = 3.0) -> list[int]:
    """SIGTERM every marked process, SIGKILL the ones left after `grace`; returns the pids signalled."""
    pids = marked(token)
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        for pid in pids:
            if pid_alive(pid):
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
            time.sleep(0.02)
        if not any(pid_alive(p) for p in pids):
            break
        pids = sorted(set(pids) | set(marked(token)))  # a child started meanwhile
    return pids
