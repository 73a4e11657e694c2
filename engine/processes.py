"""Processes and ports on this machine: liveness, /proc/<pid>/stat and environ, loopback port probes.

One place for what the runtime, dev stacks, the ledger's rollout bookkeeping and the execution
tools all need to know about a pid or a port (Linux /proc; the machines this runs on are Linux).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path


def stat_fields(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (field 3, the state, onwards); None if gone.

    The command name is in parentheses and may itself hold spaces and parentheses, so split after
    the last ')'."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(errors="replace")
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def is_zombie(pid: int) -> bool:
    fields = stat_fields(pid)
    return fields is not None and fields[0] == "Z"


def pid_alive(pid: int) -> bool:
    """The pid exists and is not a zombie (a zombie we cannot reap has finished running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return not is_zombie(pid)


def start_time(pid: int) -> int | None:
    """/proc/<pid>/stat field 22 (clock ticks since boot): with the pid, identifies one process."""
    fields = stat_fields(pid)
    return int(fields[19]) if fields and len(fields) > 19 else None


def ancestors(pid: int | None = None) -> set[int]:
    """`pid` (default: this process) and every ancestor up the ppid chain."""
    seen: set[int] = set()
    current = pid or os.getpid()
    while current > 0 and current not in seen:
        seen.add(current)
        fields = stat_fields(current)
        if not fields:
            break
        current = int(fields[1])
    return seen


def environ_markers(pid: int, prefix: bytes) -> dict[str, str] | None:
    """The environment variables of a live process whose names start with `prefix`.

    None when it is gone (or a zombie); {} when its environ cannot be read (not ours)."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return None
    except PermissionError:
        return {}
    fields = stat_fields(pid)
    if fields is None or fields[0] == "Z":
        return None
    marks = {}
    for item in raw.split(b"\0"):
        key, _, value = item.partition(b"=")
        if key.startswith(prefix):
            marks[key.decode()] = value.decode(errors="replace")
    return marks


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    """Nothing listens on (or holds) host:port: a bind with SO_REUSEADDR succeeds."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A port the OS chose as free on host (bound then released)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])
