"""The frontends a project declares under `frontends[]` in framework.yaml, as components and
scenarios need them: name, directory, port and base path (docs/reference-frontends.md#components)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.errors import ConfigError, InvalidInput, NotFound
from engine.project import Project


@dataclass(frozen=True)
class FrontendEntry:
    name: str
    dir: str  # relative to the project root
    kind: str = "web"
    port: int | None = None
    base_path: str = ""

    def root(self, project: Project) -> Path:
        return project.root / self.dir


def frontends(project: Project) -> list[FrontendEntry]:
    raw = project.config.get("frontends") or []
    if not isinstance(raw, list):
        raise ConfigError(f"{project.config_path}: `frontends` must be a list")
    out = []
    for item in raw:
        if not isinstance(item, dict) or not item.get("name"):
            raise ConfigError(f"{project.config_path}: each entry of `frontends` needs a `name`")
        name = str(item["name"])
        where = str(item.get("path") or item.get("dir") or f"frontends/{name}")
        port = item.get("port")
        out.append(FrontendEntry(name=name, dir=where, kind=str(item.get("kind") or "web"),
                                 port=int(port) if isinstance(port, int) else None,
                                 base_path=str(item.get("base_path") or "").rstrip("/")))
    return out


def pick_frontend(project: Project, name: str | None) -> FrontendEntry:
    """`--frontend <name>`, or the project's only frontend without it."""
    declared = frontends(project)
    if name is not None:
        hit = next((f for f in declared if f.name == name), None)
        if hit is None:
            known = ", ".join(f.name for f in declared) or "none"
            raise NotFound(f"no frontend {name[:80]!r} under `frontends` in framework.yaml (declared: {known})",
                           hint="framework scaffold frontend <name> adds one")
        return hit
    if not declared:
        raise InvalidInput("the project declares no frontend (`frontends` in framework.yaml)",
                           hint="framework scaffold frontend <name> adds one")
    if len(declared) > 1:
        raise InvalidInput(f"which frontend? the project declares {len(declared)}: "
                           f"{', '.join(f.name for f in declared)}", hint="pass --frontend <name>")
    return declared[0]
