"""Recorded bundles: the declared shape of an environment as last deployed
(docs/reference-env.md#shape-diff-config-new).

`env deploy` records the shape it applied; `env diff` compares the current render's object
hashes against the last recorded one (or the declared shape when none). Stored per project
and environment under the machine ledger root, written atomically.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from engine.paths import atomic_write_bytes, ledger_home, write_beside


def _bundle_path(project_key: str, env: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in project_key) or "_"
    return ledger_home() / safe / "bundles" / f"{env}.json"


def record_bundle(project_key: str, env: str, shape: dict[str, Any]) -> Path:
    """Record `shape` (JSON-serialisable) as the last applied bundle of `env`."""
    path = _bundle_path(project_key, env)
    atomic_write_bytes(path, _encode(shape))
    return path


def _encode(shape: dict[str, Any]) -> bytes:
    return json.dumps(shape, indent=2, sort_keys=True).encode()


class StagedBundle:
    """A bundle written durably beside its place while the apply runs (its write and fsync off the
    deploy's critical path), put in place by `commit` after a good apply, else `discard`ed."""

    def __init__(self, project_key: str, env: str, shape: dict[str, Any]) -> None:
        self.path = _bundle_path(project_key, env)
        self.tmp: Path | None = write_beside(self.path, _encode(shape))

    def commit(self) -> Path:
        assert self.tmp is not None
        os.replace(self.tmp, self.path)
        self.tmp = None
        return self.path

    def discard(self) -> None:
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)
            self.tmp = None


def last_bundle(project_key: str, env: str) -> dict[str, Any] | None:
    """The last recorded bundle of `env`, or None when nothing was ever recorded."""
    try:
        data = json.loads(_bundle_path(project_key, env).read_bytes())
    except FileNotFoundError:
        return None
    return data if isinstance(data, dict) else None
