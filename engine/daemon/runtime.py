"""One daemon start's hold on its instance directory (a daemon instance: advisory lock and
runtime record).

- The lock: an exclusive non-blocking flock on `<dir>/instance.lock`, held for the life of the
  process (the kernel drops it when the process dies, however it dies). A second start on the same
  directory fails at once: never two daemons on one instance directory.
- The runtime record `<dir>/runtime.json`: the published state (`starting`,
  `awaiting_credentials`, `connecting`, `connected`, `backoff`, `stopping`), pid, instance id,
  server and gateway, the stream (connected since, last heartbeat, server process), the active
  sessions, the allowed roots and the binary. Written whole (temp file + rename); removed on a
  clean exit, so a record without the lock is a leftover (`daemon ls`).
- The log: `<dir>/daemon.log` (`platform daemon logs`).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from engine import names
from engine.daemon.instances import LOCK_FILE, RECORD_FILE, instances_dir
from engine.errors import EngineError

LOG_FILE = "daemon.log"


class AlreadyRunning(EngineError):
    code = "already_running"


def check_name(name: str) -> str:
    return names.check(name, "daemon", limit=64)


def instance_path(name: str) -> Path:
    return instances_dir() / check_name(name)


class Runtime:
    """The running daemon's lock, record and identity."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dir = instance_path(name)
        self.instance_id = uuid.uuid4().hex
        self.fd: int | None = None
        self.record: dict[str, Any] = {}

    def acquire(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir, 0o700)
        fd = os.open(self.dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise AlreadyRunning(f"daemon {self.name!r} is already running (its instance lock is held)",
                                     hint=f"platform daemon status --name {self.name}") from None
            raise
        self.fd = fd

    def publish(self, **fields: Any) -> None:
        self.record.update(fields)
        self.record.update(name=self.name, pid=os.getpid(), instance_id=self.instance_id,
                           binary=sys.argv[0] if sys.argv and sys.argv[0] else sys.executable,
                           python=sys.executable, updated_at=time.time())
        self.record.setdefault("started_at", time.time())
        target = self.dir / RECORD_FILE
        tmp = target.with_name(f".{RECORD_FILE}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.record, indent=1))
        os.replace(tmp, target)

    def release(self, keep_record: bool = False) -> None:
        if not keep_record:
            (self.dir / RECORD_FILE).unlink(missing_ok=True)
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
