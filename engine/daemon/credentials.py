"""The daemon credentials file: `<instance dir>/credentials.json`, mode 0600 (directory 0700):
`{"server", "gateway", "name", "token", "token_id", "created_at"}`. Written by `platform daemon
register` (and by `start`'s auto-register), read by `start` first (the first credential in the order).
The token is never printed, logged or put in --json."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from pydantic import BaseModel, Field

from engine.errors import EngineError

FILE = "credentials.json"


class DaemonCredentials(BaseModel):
    server: str
    gateway: str
    name: str
    token: str = Field(repr=False, exclude=True)
    token_id: str = ""
    created_at: float = 0.0


def path_in(instance: Path) -> Path:
    return instance / FILE


def load(instance: Path) -> DaemonCredentials | None:
    path = path_in(instance)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o600)
    try:
        doc = json.loads(raw)
        return DaemonCredentials(**doc)
    except (ValueError, TypeError) as exc:
        raise EngineError(f"the daemon credentials file {path} is corrupt ({exc.__class__.__name__})",
                          code="credentials_file",
                          hint=f"register again: platform daemon register (or rm {path})") from None


def fingerprint(instance: Path) -> tuple[int, int] | None:
    """What tells a polling daemon that the file changed (mtime, size)."""
    try:
        st = os.stat(path_in(instance))
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size


def save(instance: Path, creds: DaemonCredentials) -> Path:
    instance.mkdir(parents=True, exist_ok=True)
    os.chmod(instance, 0o700)
    path = path_in(instance)
    doc = {**creds.model_dump(), "token": creds.token, "created_at": creds.created_at or time.time()}
    tmp = path.with_name(f".{FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path
