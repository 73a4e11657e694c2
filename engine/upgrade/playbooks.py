"""Migration playbooks (docs/reference-project.md#project-upgrade-list): per release, the steps an upgrade to it
asks of the user, shipped in assets/upgrade/playbooks.json; `.framework/migrations.json` records the ones applied
and the upgrades made (atomic writes).

Pending: a playbook of a release after the project's starting point (the `from` of its first recorded upgrade,
else its pin) up to the target, not yet applied.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.authoring import template_versions
from engine.errors import ConfigError, InvalidInput
from engine.paths import assets_dir, atomic_write_bytes
from engine.project import Project

MIGRATIONS = Path(".framework") / "migrations.json"


class Playbook(BaseModel):
    id: str
    version: str
    title: str
    description: str = ""
    steps: list[str] = []
    applied: bool = False


class PlaybookList(BaseModel):
    from_version: str
    to_version: str
    pending: list[Playbook]
    applied: list[str]


class ApplyResult(BaseModel):
    id: str
    title: str
    already: bool  # it was recorded before: nothing written
    at: str


@cache
def shipped() -> tuple[Playbook, ...]:
    data = json.loads((assets_dir() / "upgrade" / "playbooks.json").read_text(encoding="utf-8"))
    items = [Playbook(**p) for p in data.get("playbooks", [])]
    return tuple(sorted(items, key=lambda p: (template_versions.key(p.version), p.id)))


def _record(root: Path) -> dict[str, Any]:
    path = root / MIGRATIONS
    if not path.is_file():
        return {"applied": [], "upgrades": []}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ConfigError(f"{MIGRATIONS}: not readable JSON", hint="restore it from version control") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{MIGRATIONS}: not a JSON object", hint="restore it from version control")
    return {"applied": [a for a in data.get("applied", []) if isinstance(a, dict) and "id" in a],
            "upgrades": [u for u in data.get("upgrades", []) if isinstance(u, dict)]}


def _write(root: Path, data: dict[str, Any]) -> None:
    atomic_write_bytes(root / MIGRATIONS, (json.dumps(data, indent=2) + "\n").encode("utf-8"))


def _start(project: Project) -> str:
    """The release the project started the upgrades from: the first recorded upgrade's `from`, else the pin."""
    ups = _record(project.root)["upgrades"]
    first = str(ups[0].get("from", "")) if ups else ""
    pin = str(project.config.get("framework_version") or "")
    for value in (first, pin):
        try:
            template_versions.key(value)
            return value
        except ValueError:
            continue
    return template_versions.current()


def pending(project: Project, target: str | None = None) -> list[Playbook]:
    target = target or template_versions.current()
    start = template_versions.key(_start(project))
    done = {str(a["id"]) for a in _record(project.root)["applied"]}
    return [p for p in shipped() if start < template_versions.key(p.version) <= template_versions.key(target)
            and p.id not in done]


def list_pending(project: Project, to: str | None = None) -> PlaybookList:
    target = template_versions.target(to)
    applied = [str(a["id"]) for a in _record(project.root)["applied"]]
    return PlaybookList(from_version=_start(project), to_version=target, pending=pending(project, target),
                        applied=applied)


def apply(project: Project, playbook_id: str) -> ApplyResult:
    """Record one playbook as applied (the steps are the user's to do); already recorded: said, nothing written."""
    from engine.authoring.ownership import now

    known = {p.id: p for p in shipped()}
    book = known.get(playbook_id.strip())
    if book is None:
        raise InvalidInput(f"{playbook_id[:80]!r} is not a migration playbook of this framework",
                           hint="framework project upgrade list shows the pending ones")
    data = _record(project.root)
    previous = next((a for a in data["applied"] if a["id"] == book.id), None)
    if previous is not None:
        return ApplyResult(id=book.id, title=book.title, already=True, at=str(previous.get("at", "")))
    stamp = now()
    data["applied"].append({"id": book.id, "version": book.version, "at": stamp})
    _write(project.root, data)
    return ApplyResult(id=book.id, title=book.title, already=False, at=stamp)


def record_upgrade(root: Path, start: str, target: str, conflicts: list[str]) -> None:
    """One entry per upgrade that moved the pin (its conflicts listed): the lower end of `pending`'s range."""
    if start == target:
        return
    from engine.authoring.ownership import now

    data = _record(root)
    data["upgrades"].append({"from": start, "to": target, "at": now(), "conflicts": conflicts})
    _write(root, data)
