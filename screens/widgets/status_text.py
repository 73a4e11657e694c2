"""Plain-text summaries of engine status documents shared by the deploy screens. No Textual here."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any


def age(ts: float | None, enabled: bool = True, now: float | None = None) -> str:
    """'42s ago' / '5m ago' / '3h ago' / '2d ago'; '-' without a time; 'hidden' when clocks are off."""
    if not ts:
        return "-"
    if not enabled:
        return "hidden"
    secs = max(0, int((now or time.time()) - ts))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{secs // size}{unit} ago"
    return f"{secs}s ago"


def seconds(value: float | None, enabled: bool = True) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}s" if enabled else "hidden"


def verify_summary(images: list[dict[str, Any]]) -> str:
    """Per-image verify states counted: '2 match', '1 match, 1 drift'."""
    if not images:
        return "-"
    counts = Counter(i.get("state", "?") for i in images)
    return ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))


def phase_summary(workloads: list[dict[str, Any]]) -> str:
    phases = [w.get("phase") or "-" for w in workloads]
    if not phases:
        return "-"
    if len(set(phases)) == 1:
        return phases[0]
    return " ".join(f"{w['name']}:{w.get('phase') or '-'}" for w in workloads)


def short_digest(digest: Any, width: int = 12) -> str:
    if not digest:
        return "-"
    if isinstance(digest, list):
        return ",".join(short_digest(d, width) for d in digest)
    return str(digest).replace("sha256:", "")[:width]
