"""Ownership records (docs/reference-authoring.md, Ownership): `.framework/scaffolded.json` (the birth ledger of
scaffold-once files) and `.framework/disowned.json` (files moved out of generation, with a reason).

Scaffold-once files belong to the user from birth: never overwritten. A disowned file is never
written again by generation (one-way; re-adopt by deleting the file and its record).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.authoring.record_files import DISOWNED, SCAFFOLDED, STATE, generation_state, state_files  # noqa: F401
from engine.authoring.record_files import read_items as _read
from engine.paths import atomic_write_bytes


class Birth(BaseModel):
    path: str
    born: str
    by: str  # the command that wrote it: project new, generate, scaffold entity ...
    args: dict[str, str] = {}  # the scaffold's arguments (names, flags): rescaffold re-runs it with them


class Disowned(BaseModel):
    path: str
    reason: str
    at: str


def now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _write(root: Path, rel: Path, items: list[dict[str, Any]]) -> None:
    items = sorted(items, key=lambda i: i["path"])
    atomic_write_bytes(root / rel, (json.dumps({"files": items}, indent=2) + "\n").encode())


def scaffolded(root: Path) -> list[Birth]:
    out = []
    for i in _read(root, SCAFFOLDED):
        args = i.get("args")
        args = {str(k): str(v) for k, v in args.items()} if isinstance(args, dict) else {}
        out.append(Birth(path=str(i["path"]), born=str(i.get("born", "")), by=str(i.get("by", "")), args=args))
    return out


def disowned(root: Path) -> list[Disowned]:
    return [Disowned(**{"reason": "", "at": "", **i}) for i in _read(root, DISOWNED)]


def record_births(root: Path, paths: list[str], by: str, args: dict[str, str] | None = None) -> None:
    """Record scaffold-once files at birth (a path already recorded keeps its first birth)."""
    items = _read(root, SCAFFOLDED)
    known = {i["path"] for i in items}
    stamp = now()
    extra = {"args": dict(args)} if args else {}
    items += [{"path": p, "born": stamp, "by": by, **extra} for p in paths if p not in known]
    if len(items) != len(known) or not (root / SCAFFOLDED).exists():
        _write(root, SCAFFOLDED, items)


def record_disowned(root: Path, paths: list[str], reason: str) -> None:
    items = [i for i in _read(root, DISOWNED) if i["path"] not in set(paths)]
    stamp = now()
    items += [{"path": p, "reason": reason, "at": stamp} for p in paths]
    _write(root, DISOWNED, items)


def forget_births(root: Path, prefix: str) -> list[str]:
    """Drop the birth records of the files under `prefix` (a directory removed on purpose, e.g. by
    `project delete service`): `scaffolded --absent` and `rescaffold` no longer offer them."""
    items = _read(root, SCAFFOLDED)
    gone = [i["path"] for i in items if str(i["path"]).startswith(prefix)]
    if gone:
        _write(root, SCAFFOLDED, [i for i in items if i["path"] not in set(gone)])
    return gone
