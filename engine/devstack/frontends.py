"""An environment's frontends as the dashboard's environment detail shows them
(docs/reference-frontends.md#dashboard): the dev server's URL (the running dev stack's port when `env up`
runs it in this checkout, else the declared port), whether it runs, and its build state (the built
output directory and when it was last written)."""

from __future__ import annotations

from pydantic import BaseModel

from engine.devstack import stacks as registry
from engine.devstack.checkout import detect
from engine.environments.model import EnvironmentSpec
from engine.project import Project


class FrontendView(BaseModel):
    name: str
    dir: str
    url: str | None = None  # the dev server's URL (with the base path), None without a port
    running: bool = False  # `env up` runs its dev server in this checkout's stack
    build: str = "not built"  # built | not built
    built_at: float | None = None  # the output directory's last write (epoch seconds)
    output: str = ""


def frontend_views(project: Project, spec: EnvironmentSpec) -> list[FrontendView]:
    stack = registry.load(registry.stack_id(project.key, spec.name, detect(project.root).key))
    running = {p.name: p for p in (stack.processes if stack else [])
               if p.kind == "frontend" and registry.is_alive(stack, p)} if stack else {}
    out = []
    for f in spec.frontends:
        proc = running.get(f.name)
        port = proc.ports[0] if proc is not None and proc.ports else f.port
        url = f"http://127.0.0.1:{port}{f.base_path or ''}/" if port else None
        where = project.root / f.output_path
        built_at = max((p.stat().st_mtime for p in [where, *where.iterdir()]), default=None) \
            if where.is_dir() else None
        out.append(FrontendView(name=f.name, dir=f.dir, url=url, running=proc is not None,
                                build="built" if built_at is not None else "not built", built_at=built_at,
                                output=f.output_path))
    return out
