"""Daemon instances on this machine, as `platform daemon ls` reports them (a daemon
instance is a directory under ~/.platform/instances: an advisory lock (liveness) and a runtime record
(published state, e.g. awaiting_credentials); docs/reference-daemon.md#platform-daemon).

The daemon (`platform daemon start`, engine/daemon/) writes these; this module only reads what
instances leave behind:
- RUNNING comes from the lock alone: a non-blocking flock on `<dir>/instance.lock` that fails
  means a live process holds it (the kernel drops the lock when its holder dies).
- The runtime record `<dir>/runtime.json` is reported separately: running without a record means
  the daemon died before publishing or is still starting; a record without running is leftover.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

LOCK_FILE = "instance.lock"
RECORD_FILE = "runtime.json"


class Instance(BaseModel):
    name: str
    path: str
    running: bool
    record: dict[str, Any] | None = None
    """The runtime record as published (None when absent or unreadable)."""
    state: str | None = None
    """The record's published state, e.g. `awaiting_credentials`."""
    note: str
    """What running and record together mean (`daemon ls`)."""


class InstanceList(BaseModel):
    home: str
    instances: list[Instance]


def instances_dir() -> Path:
    override = os.environ.get("PLATFORM_INSTANCES_DIR")
    return Path(override) if override else Path.home() / ".platform" / "instances"


def lock_held(lock: Path) -> bool:
    """True when another open file holds the instance's advisory lock (non-blocking flock)."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False  # no lock file: nothing can hold it
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return True
        raise
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _record(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:
        return None, f"unreadable runtime record: {exc}"
    if not isinstance(doc, dict):
        return None, "unreadable runtime record: not a JSON object"
    return doc, None


def _note(running: bool, record: dict[str, Any] | None, problem: str | None) -> str:
    if problem:
        return problem
    if running and record is None:
        return "running without record: died before publishing or still starting"
    if not running and record is not None:
        return "record without running: leftover"
    return "running" if running else "not running, no record"


def list_instances(home: Path | None = None) -> InstanceList:
    root = home or instances_dir()
    found: list[Instance] = []
    if root.is_dir():
        for entry in sorted(root.iterdir(), key=lambda p: p.name):
            if not entry.is_dir():
                continue
            running = lock_held(entry / LOCK_FILE)
            record, problem = _record(entry / RECORD_FILE)
            state = record.get("state") if record else None
            found.append(
                Instance(
                    name=entry.name,
                    path=str(entry),
                    running=running,
                    record=record,
                    state=str(state) if state is not None else None,
                    note=_note(running, record, problem),
                )
            )
    return InstanceList(home=str(root), instances=found)
