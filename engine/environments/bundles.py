"""Recorded bundles: the declared shape of an environment as last deployed (spec 2, env diff).

`env deploy` records the shape it applied; `env diff` compares the current render's object
hashes against the last recorded one (or the declared shape when none). Stored per project
and environment under the machine ledger root, written atomically.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.paths import atomic_write_bytes, ledger_home


def _bundle_path(project_key: str, env: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in project_key) or "_"
    return ledger_home() / safe / "bundles" / f"{env}.json"


def record_bundle(project_key: str, env: str, shape: dict[str, Any]) -> Path:
    """Record `shape` (JSON-serialisable) as the last applied bundle of `env`."""
    path = _bundle_path(project_key, env)
    atomic_write_bytes(path, json.dumps(shape, indent=2, sort_keys=True).encode())
    return path


def last_bundle(project_key: str, env: str) -> dict[str, Any] | None:
    """The last recorded bundle of `env`, or None when nothing was ever recorded."""
    try:
        data = json.loads(_bundle_path(project_key, env).read_bytes())
    except FileNotFoundError:
        return None
    return data if isinstance(data, dict) else None
