"""The port-block registry `.framework/blocks.json` (docs/reference-devstack.md#files).

Each key holds a block of 100 ports; host port = base + block*100; the primary checkout's key
is "" and holds block 0; `dev_stack.max_stacks` (default 8) blocks at most. The file lives in
the primary checkout so every worktree of a repository allocates from one table. Every change
is read-modify-write under an exclusive `flock` and lands by atomic rename: two processes never
hand out one block twice, and a crash mid-write leaves the old table, never half a file.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from engine.devstack.checkout import Checkout, detect, worktree_exists
from engine.errors import ConfigError, EngineError, UsageError
from engine.paths import atomic_write_bytes
from engine.project import Project

BLOCK_SIZE = 100  # 100 ports per key (the port block size)
DEFAULT_MAX_STACKS = 8  # the dev stack ceiling's default (`dev_stack.max_stacks`)
REGISTRY = Path(".framework") / "blocks.json"
LABELS = {"dev_stack": "dev stack", "derived": "derived port-block", "standalone": "standalone"}

Kind = Literal["dev_stack", "derived", "standalone"]


class DevStackCeiling(EngineError):
    """Every block up to `dev_stack.max_stacks` is held (docs/reference-devstack.md#limits)."""

    code = "dev_stack_ceiling"


class BlockRegistryCorrupt(EngineError):
    code = "blocks_unreadable"


class KeyNotFound(EngineError):
    code = "key_not_found"


class BlockEntry(BaseModel):
    key: str
    block: int
    kind: Kind = "derived"
    origin: str | None = None  # the worktree directory the key was derived from; None for standalone
    allocated_at: float = 0.0
    used_at: float = 0.0

    @property
    def label(self) -> str:
        return LABELS[self.kind]


class PortAssignment(BaseModel):
    key: str
    block: int
    base: int
    port: int


class BlockRow(BaseModel):
    key: str
    block: int
    label: str
    origin: str | None
    origin_exists: bool | None
    stacks: list[str] = []


class BlockList(BaseModel):
    registry: str
    max_stacks: int
    blocks: list[BlockRow]


class BlockChange(BaseModel):
    """What prune / release did, or would do (`applied` false on a dry run)."""

    registry: str
    applied: bool
    reclaimed: list[BlockEntry]
    kept: list[dict[str, str]] = []


def max_stacks(project: Project) -> int:
    section = project.config.get("dev_stack") or {}
    value = section.get("max_stacks", DEFAULT_MAX_STACKS) if isinstance(section, dict) else DEFAULT_MAX_STACKS
    if not isinstance(value, int) or isinstance(value, bool) or value < 1 or value * BLOCK_SIZE > 65535:
        raise ConfigError(f"{project.config_path}: dev_stack.max_stacks must be a whole number from 1 to 655, "
                          f"got {value!r}")
    return value


def registry_path(checkout: Checkout) -> Path:
    return Path(checkout.primary_root) / REGISTRY


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Exclusive lock on `<registry>.lock`; the kernel drops it if the holder dies."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _read(path: Path) -> dict[str, BlockEntry]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise BlockRegistryCorrupt(f"cannot read {path}: {exc.strerror}") from exc
    try:
        doc = json.loads(raw)
        return {key: BlockEntry(key=key, **{k: v for k, v in entry.items() if k != "key"})
                for key, entry in (doc.get("blocks") or {}).items()}
    except (ValueError, TypeError, AttributeError) as exc:
        raise BlockRegistryCorrupt(f"{path} is not a valid port-block registry: {exc}",
                                   hint="fix or remove the file; blocks are re-allocated on the next `env up`") from exc


def _write(path: Path, entries: dict[str, BlockEntry]) -> None:
    doc: dict[str, Any] = {"version": 1, "block_size": BLOCK_SIZE,
                           "blocks": {k: e.model_dump(exclude={"key"}) for k, e in sorted(entries.items())}}
    atomic_write_bytes(path, (json.dumps(doc, indent=2) + "\n").encode())


def read_entries(project: Project) -> dict[str, BlockEntry]:
    return _read(registry_path(detect(project.root)))


def allocate(project: Project, *, kind: Kind = "derived", key: str | None = None,
             checkout: Checkout | None = None) -> BlockEntry:
    """The block of `key` (default: this checkout's key), allocating the lowest free one if new."""
    checkout = checkout or detect(project.root)
    standalone = key is not None and key != checkout.key
    key = checkout.key if key is None else key
    if standalone:
        kind = "standalone"
    ceiling = max_stacks(project)
    path = registry_path(checkout)
    now = time.time()
    with _locked(path):
        entries = _read(path)
        entry = entries.get(key)
        if entry is None:
            taken = {e.block for e in entries.values()}
            if key == "":
                block = 0  # the primary checkout's key holds block 0
            else:
                free = [b for b in range(1, ceiling) if b not in taken]
                if not free:
                    holders = ", ".join(repr(e.key) for e in sorted(entries.values(), key=lambda e: e.block))
                    raise DevStackCeiling(
                        f"no free port block: all {ceiling} blocks (dev_stack.max_stacks) are held by {holders}",
                        hint="free one with `framework env devstack prune` or `framework env devstack release "
                             "<key> --apply`, or raise dev_stack.max_stacks in framework.yaml")
                block = free[0]
            entry = BlockEntry(key=key, block=block, kind=kind, allocated_at=now,
                               origin=None if standalone else (checkout.worktree or checkout.root))
        elif kind == "dev_stack" and entry.kind == "derived":
            entry.kind = "dev_stack"
        entry.used_at = now
        entries[key] = entry
        _write(path, entries)
    return entry


def port(project: Project, base: int, key: str | None = None) -> PortAssignment:
    """`env devstack port <base>`: base + block*100 for this worktree (or a standalone key)."""
    if base < 1 or base > 65535:
        raise UsageError(f"base port {base} is outside 1..65535")
    entry = allocate(project, key=key)
    value = base + entry.block * BLOCK_SIZE
    if value > 65535:
        raise UsageError(f"base {base} + block {entry.block}*{BLOCK_SIZE} = {value} is not a valid port",
                         hint="pick a lower base port")
    return PortAssignment(key=entry.key, block=entry.block, base=base, port=value)


def list_blocks(project: Project) -> BlockList:
    from engine.devstack.stacks import load_stacks

    checkout = detect(project.root)
    path = registry_path(checkout)
    running: dict[str, list[str]] = {}
    for stack in load_stacks():
        if stack.project == project.key:
            running.setdefault(stack.key, []).append(stack.env)
    rows = [BlockRow(key=e.key, block=e.block, label=e.label, origin=e.origin,
                     origin_exists=worktree_exists(e.origin) if e.origin and e.key else None,
                     stacks=sorted(running.get(e.key, [])))
            for e in sorted(_read(path).values(), key=lambda e: e.block)]
    return BlockList(registry=str(path), max_stacks=max_stacks(project), blocks=rows)


def _prunable(entry: BlockEntry) -> str | None:
    """Why an entry is kept by prune, or None when its worktree is gone (`env devstack prune`)."""
    if entry.key == "":
        return "default key"
    if entry.kind == "standalone":
        return "standalone key"
    if not entry.origin:
        return "no recorded origin"
    if worktree_exists(entry.origin):
        return "worktree exists"
    return None


def prune(project: Project, *, dry_run: bool = False) -> BlockChange:
    path = registry_path(detect(project.root))
    with _locked(path):
        entries = _read(path)
        gone = [e for e in entries.values() if _prunable(e) is None]
        kept = [{"key": e.key, "reason": str(_prunable(e))} for e in entries.values() if _prunable(e)]
        if gone and not dry_run:
            for e in gone:
                del entries[e.key]
            _write(path, entries)
    return BlockChange(registry=str(path), applied=not dry_run, reclaimed=gone, kept=kept)


def release(project: Project, key: str, *, apply: bool = False) -> BlockChange:
    """`env devstack release <key>`: dry run unless `apply`; a key with a running stack is refused."""
    from engine.devstack.stacks import load_stacks

    path = registry_path(detect(project.root))
    if key == "":
        raise UsageError("the default key (primary checkout, block 0) is never released")
    busy = sorted(s.env for s in load_stacks() if s.project == project.key and s.key == key)
    if busy:
        raise EngineError(f"key {key!r} has a running dev stack ({', '.join(busy)})",
                          code="stack_running", hint="stop it first: framework env down " + busy[0])
    with _locked(path):
        entries = _read(path)
        entry = entries.get(key)
        if entry is None:
            raise KeyNotFound(f"no port block is held by key {key!r} in {path}",
                              hint="see the holders with: framework env devstack list")
        if apply:
            del entries[key]
            _write(path, entries)
    return BlockChange(registry=str(path), applied=apply, reclaimed=[entry])
