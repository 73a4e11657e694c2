"""Which frontend a component install or a scenario is for: `--frontend <name>` among framework.yaml's
`frontends[]` (engine.authoring.frontends reads them), or the project's only frontend without it
(docs/reference-frontends.md#components)."""

from __future__ import annotations

from engine.authoring.frontends import FrontendEntry, entries
from engine.errors import InvalidInput, NotFound
from engine.project import Project


def pick_frontend(project: Project, name: str | None) -> FrontendEntry:
    declared = entries(project.config, project.config_path)
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
