"""The daemon's transfer and session samples, and `platform daemon stats` (docs/reference-daemon.md#daemon-stats).

A running daemon appends one sample to `<instance dir>/stats.jsonl` every interval
(`PLATFORM_DAEMON_STATS_INTERVAL_S`, default 10 s): `at` (epoch seconds), `sessions` (the active
requests by kind, as the runtime record shows them), `read_bytes` and `written_bytes` (file bytes sent
to the server and received from it since the previous sample, on the stream or the bulk side
channel). The file keeps the last day: past `MAX_SAMPLES * 2` lines it is cut to the newest
`MAX_SAMPLES` (written whole, temp file + rename).

`daemon_stats` reads the samples of the last N minutes into one-minute columns: the bytes each way,
the throughput (bytes of the minute / 60 s) and the most sessions seen in a sample of the minute.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.errors import EngineError, NotFound

STATS_FILE = "stats.jsonl"
MAX_SAMPLES = 8640  # a day of 10-second samples
MAX_MINUTES = 24 * 60


def interval() -> float:
    try:
        value = float(os.environ.get("PLATFORM_DAEMON_STATS_INTERVAL_S", "10"))
    except ValueError:
        value = 10.0
    return min(max(value, 0.05), 3600.0)


def append_sample(directory: Path, sessions: dict[str, int], read: int, written: int,
                  at: float | None = None) -> None:
    """One line per interval; cut to the newest MAX_SAMPLES once the file holds twice that."""
    line = json.dumps({"at": round(time.time() if at is None else at, 3), "sessions": sessions,
                       "read_bytes": read, "written_bytes": written}, separators=(",", ":"))
    path = directory / STATS_FILE
    with path.open("a", encoding="utf-8") as f:
        f.write(line + "\n")
    if path.stat().st_size > MAX_SAMPLES * 2 * 80:  # only then count the lines (a sample is ~60-80 bytes)
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > MAX_SAMPLES * 2:
            tmp = path.with_name(f".{STATS_FILE}.{os.getpid()}.tmp")
            tmp.write_text("\n".join(lines[-MAX_SAMPLES:]) + "\n", encoding="utf-8")
            os.replace(tmp, path)


class DaemonMinute(BaseModel):
    start: float  # epoch seconds: the minute's first instant
    read_bytes: int
    written_bytes: int
    throughput_bps: float  # (read + written) / 60
    sessions_max: int | None  # None: no sample in this minute (the daemon was not running)


class DaemonStats(BaseModel):
    name: str
    minutes: int
    since: float
    until: float
    samples: int
    read_bytes: int
    written_bytes: int
    sessions_max: int
    per_minute: list[DaemonMinute]  # oldest first


def _samples(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        try:
            doc = json.loads(line)
            float(doc["at"])
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line (the daemon was killed mid-write) or a foreign one
        out.append(doc)
    return out


def daemon_stats(name: str, minutes: int = 60, now: float | None = None) -> DaemonStats:
    """The samples of daemon `name` in [now - minutes, now), per minute."""
    from engine.daemon.runtime import instance_path

    if not 1 <= minutes <= MAX_MINUTES:
        raise EngineError(f"--minutes must be 1-{MAX_MINUTES}, not {minutes}", code="usage", exit_code=2)
    directory = instance_path(name)
    if not directory.is_dir():
        raise NotFound(f"no daemon instance named {name!r}", hint="platform daemon ls")
    until = time.time() if now is None else now
    since = until - minutes * 60
    reads, writes = [0] * minutes, [0] * minutes
    peaks: list[int | None] = [None] * minutes
    count = 0
    for s in _samples(directory / STATS_FILE):
        at = float(s["at"])
        if not since <= at < until:
            continue
        i = int((at - since) // 60)
        count += 1
        reads[i] += int(s.get("read_bytes") or 0)
        writes[i] += int(s.get("written_bytes") or 0)
        total = sum(int(v) for v in (s.get("sessions") or {}).values())
        peaks[i] = max(peaks[i] or 0, total)
    per_minute = [DaemonMinute(start=round(since + 60 * i, 3), read_bytes=reads[i], written_bytes=writes[i],
                               throughput_bps=round((reads[i] + writes[i]) / 60, 3), sessions_max=peaks[i])
                  for i in range(minutes)]
    return DaemonStats(name=name, minutes=minutes, since=round(since, 3), until=round(until, 3), samples=count,
                       read_bytes=sum(reads), written_bytes=sum(writes),
                       sessions_max=max((p for p in peaks if p is not None), default=0), per_minute=per_minute)
