"""`platform daemon status | stop | logs` and `start --background` (docs/reference-daemon.md#platform-daemon),
from outside the daemon process: the lock says whether it runs (and /proc/locks who holds it), the runtime record
what it published."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.daemon.instances import LOCK_FILE, RECORD_FILE, lock_held
from engine.daemon.runtime import LOG_FILE, instance_path
from engine.errors import EngineError

DEFAULT_LINES = 50  # `daemon logs` shows the last 50 lines by default
DETACHED_ENV = "PLATFORM_DAEMON_DETACHED"  # set for a --background daemon: its stderr is the log file already


class Status(BaseModel):
    name: str
    path: str
    running: bool
    pid: int | None = None
    state: str | None = None
    connected: bool
    stream: dict[str, Any] = {}
    sessions: dict[str, int] = {}
    binary: str | None = None
    instance_id: str | None = None
    server: str | None = None
    gateway: str | None = None
    roots: list[str] = []
    note: str


def record_of(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads((path / RECORD_FILE).read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def holder(lock: Path) -> int | None:
    """The pid /proc/locks names for the flock on `lock` (None when nobody holds it)."""
    try:
        inode = os.stat(lock).st_ino
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5].rsplit(":", 1)[-1] == str(inode):
            return int(parts[4])
    return None


def status(name: str) -> tuple[Status, int]:
    path = instance_path(name)
    running = lock_held(path / LOCK_FILE)
    record = record_of(path) or {}
    stream = record.get("stream") or {}
    connected = bool(running and stream.get("connected"))
    if not running:
        note = "not running" + (" (leftover record)" if record else "")
    elif not record:
        note = "running without record: still starting or died before publishing"
    else:
        note = "connected" if connected else f"running, stream not established ({record.get('state')})"
    doc = Status(name=name, path=str(path), running=running, pid=(holder(path / LOCK_FILE) or record.get("pid"))
                 if running else record.get("pid"), state=record.get("state"), connected=connected, stream=stream,
                 sessions=record.get("sessions") or {}, binary=record.get("binary"),
                 instance_id=record.get("instance_id"), server=record.get("server"), gateway=record.get("gateway"),
                 roots=record.get("roots") or [], note=note)
    return doc, 0 if connected else 1


class StopResult(BaseModel):
    name: str
    was_running: bool
    pid: int | None
    signals: list[str]
    stopped: bool
    record_kept: bool
    note: str


def _wait_released(lock: Path, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not lock_held(lock):
            return True
        time.sleep(0.05)
    return not lock_held(lock)


def stop(name: str, *, force: bool = False, grace: float = 10.0) -> tuple[StopResult, int]:
    """Graceful signal and wait; --force kills at once; surviving the grace: killed; surviving
    that: non-zero exit and the runtime record kept (`daemon stop`'s rule)."""
    path = instance_path(name)
    lock = path / LOCK_FILE
    record = record_of(path) or {}
    if not lock_held(lock):
        return StopResult(name=name, was_running=False, pid=None, signals=[], stopped=True,
                          record_kept=bool(record), note="not running"), 0
    pid = holder(lock) or record.get("pid")
    if not isinstance(pid, int):
        raise EngineError(f"daemon {name!r} holds its lock but no process can be named", code="stop_failed")
    sent: list[str] = []

    def send(sig: signal.Signals) -> None:
        sent.append(sig.name)
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass

    if not force:
        send(signal.SIGTERM)
        if _wait_released(lock, grace):
            return StopResult(name=name, was_running=True, pid=pid, signals=sent, stopped=True,
                              record_kept=(path / RECORD_FILE).exists(), note="stopped"), 0
    send(signal.SIGKILL)
    if _wait_released(lock, 5.0):
        (path / RECORD_FILE).unlink(missing_ok=True)  # killed: nobody else removes it
        return StopResult(name=name, was_running=True, pid=pid, signals=sent, stopped=True, record_kept=False,
                          note="killed" if force else f"killed (still running after {grace:g} s)"), 0
    return StopResult(name=name, was_running=True, pid=pid, signals=sent, stopped=False, record_kept=True,
                      note="still running after SIGKILL: the instance lock is still held; record kept"), 1


def log_path(name: str) -> Path:
    return instance_path(name) / LOG_FILE


def tail(name: str, lines: int = DEFAULT_LINES) -> list[str]:
    return tail_at(name, lines)[0]


def tail_at(name: str, lines: int = DEFAULT_LINES) -> tuple[list[str], int]:
    """The log's last `lines` lines and the offset its end was at: `follow(name, start=offset)` then prints
    every line appended after them, none lost between the two reads."""
    path = log_path(name)
    if not path.exists():
        raise EngineError(f"daemon {name!r} has no log yet ({path})", code="not_found",
                          hint=f"start it: platform daemon start --name {name}")
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = end = fh.tell()
        block, data = 8192, b""
        while size > 0 and data.count(b"\n") <= lines:
            step = min(block, size)
            size -= step
            fh.seek(size)
            data = fh.read(step) + data
            block *= 2
    return ([line.decode("utf-8", "replace") for line in data.splitlines()[-lines:]] if lines else []), end


def follow(name: str, poll: float = 0.2, start: int | None = None) -> Iterator[str]:
    """Lines appended to the log from offset `start` (default: its end now) on, until the caller stops."""
    path = log_path(name)
    with open(path, "rb") as fh:
        if start is None:
            fh.seek(0, os.SEEK_END)
        else:
            fh.seek(start)
        pending = b""
        while True:
            chunk = fh.read()
            if not chunk:
                time.sleep(poll)
                continue
            pending += chunk
            *done, pending = pending.split(b"\n")
            for line in done:
                yield line.decode("utf-8", "replace")


class Started(BaseModel):
    name: str
    pid: int
    background: bool
    state: str | None
    log: str


def start_background(argv: list[str], name: str, wait: float = 15.0) -> Started:
    """Run the foreground daemon detached (own session, output to its log) and wait until it holds
    its lock and published its record."""
    path = instance_path(name)
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    lock = path / LOCK_FILE
    if lock_held(lock):
        raise EngineError(f"daemon {name!r} is already running (its instance lock is held)", code="already_running",
                          hint=f"platform daemon status --name {name}")
    with open(path / LOG_FILE, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app.main", *argv], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=out, start_new_session=True, cwd=os.getcwd(),
                                env={**os.environ, DETACHED_ENV: "1"})
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        record = record_of(path) or {}
        if record.get("pid") == proc.pid and lock_held(lock):
            return Started(name=name, pid=proc.pid, background=True, state=record.get("state"),
                           log=str(path / LOG_FILE))
        if proc.poll() is not None:
            last = tail(name, 5) if (path / LOG_FILE).exists() else []
            raise EngineError(f"the daemon exited at start (exit {proc.returncode})" +
                              (": " + last[-1] if last else ""), code="start_failed",
                              hint=f"platform daemon logs --name {name} --no-follow")
        time.sleep(0.05)
    raise EngineError(f"the daemon did not publish its record within {wait:g} s", code="start_failed",
                      hint=f"platform daemon logs --name {name}")
