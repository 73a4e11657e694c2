"""`framework project graph` (docs/reference-project.md#project-graph): the project's dependency graph as
JSON. Nodes: services, packages (internal/<name>/contract.go), entities, frontends, workers, webhooks,
workloads and environments. Edges: service->entity (the entity is declared in the service's proto file),
service->package and service->service (a handler file imports the package, or the other service's
generated Connect client), package->service (a package imports a service's client), frontend->service
(the frontend's own sources call the service's generated client helper), webhook->service (framework.yaml
`webhooks[].service`), workload->service|worker|frontend (what the workload runs), environment->workload
(the environment's KCL, evaluated). Dangling references are `warnings`, never errors.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.project import Project


class Node(BaseModel):
    id: str  # <kind>:<name>
    kind: str  # service | package | entity | frontend | worker | webhook | workload | environment
    name: str
    file: str | None = None


class Edge(BaseModel):
    source: str  # node ids
    target: str
    kind: str  # e.g. service->entity
    via: str = ""  # the file or declaration the edge was read from


class Graph(BaseModel):
    env: str | None = None
    nodes: list[Node] = []
    edges: list[Edge] = []
    warnings: list[str] = []

    def dependents(self, node: str) -> list[Edge]:
        return [e for e in self.edges if e.target == node and e.source != node]


class _Builder:
    def __init__(self) -> None:
        self.graph = Graph()
        self.ids: set[str] = set()

    def node(self, kind: str, name: str, file: str | None = None) -> str:
        nid = f"{kind}:{name}"
        if nid not in self.ids:
            self.ids.add(nid)
            self.graph.nodes.append(Node(id=nid, kind=kind, name=name, file=file))
        return nid

    def edge(self, source: str, target: str, via: str = "") -> None:
        kind = f"{source.split(':', 1)[0]}->{target.split(':', 1)[0]}"
        if source != target and not any(e.source == source and e.target == target for e in self.graph.edges):
            self.graph.edges.append(Edge(source=source, target=target, kind=kind, via=via))

    def warn(self, text: str) -> None:
        self.graph.warnings.append(text)


def project_graph(project: Project, env: str | None = None) -> Graph:
    """The graph; `env` limits workloads and environments to one (an unknown one: exit 1)."""
    from engine.authoring import naming
    from engine.authoring.config import load
    from engine.inspection.sources import SourceCache, descriptor, go_files, tables

    if env is not None:
        from engine.environments.files import env_file

        env_file(project, env)  # EnvironmentNotFound (exit 1) names the declared ones
    cfg = load(project)
    cache = SourceCache(project.root)
    desc = descriptor(project, cache, cfg.proto_dir) or {"services": [], "messages": [], "files": []}
    files = go_files(project, cache)
    known_tables = {t["name"] for t in tables(project, cache)}
    cache.save()
    b = _Builder()
    b.graph.env = env
    go_import = {f["name"]: f.get("go_import") for f in desc["files"]}
    go_name = {f["name"]: f.get("go_name") for f in desc["files"]}
    clients: dict[str, str] = {}  # Connect client package -> service key
    services: dict[str, str] = {}  # service key -> node id
    for svc in desc["services"]:
        key = naming.service_key(svc["name"])
        services[key] = b.node("service", key, f"{cfg.proto_dir}/{svc['file']}")
        if go_import.get(svc["file"]):
            clients[f"{go_import[svc['file']]}/{go_name[svc['file']]}connect"] = key
    by_file = {svc["file"]: naming.service_key(svc["name"]) for svc in desc["services"]}
    for msg in desc["messages"]:
        if not msg["entity"]:
            continue
        entity = b.node("entity", msg["full_name"], f"{cfg.proto_dir}/{msg['file']}")
        if msg["file"] in by_file:  # a tombstone's entities stay, with no service
            b.edge(services[by_file[msg["file"]]], entity, f"{cfg.proto_dir}/{msg['file']}")
        if naming.table_of(msg["go_name"].split("_")[-1]) not in known_tables:
            b.warn(f"entity {msg['full_name']} has no table in the migrations (`framework scaffold` creates one)")
    for entry in cfg.services:
        if str(entry.get("name")) not in services:
            b.warn(f"framework.yaml services: {entry.get('name')} declares no service in the protos "
                   f"({entry.get('proto', 'no proto')})")
    packages = _packages(project, cfg.module, b)
    _imports(files, cfg.module, services, packages, clients, b)
    _frontends(project, services, b)
    workers = {str(w["name"]): b.node("worker", str(w["name"]), f"internal/workers/{w['name']}")
               for w in cfg.workers}
    for hook in cfg.webhooks:
        node = b.node("webhook", str(hook["name"]), f"internal/webhooks/{hook['name']}")
        target = str(hook.get("service") or "")
        if target in services:
            b.edge(node, services[target], "framework.yaml webhooks")
        else:
            b.warn(f"webhook {hook['name']} names an unknown service {target!r} (framework.yaml webhooks)")
    _environments(project, cfg, env, services, workers, b)
    b.graph.nodes.sort(key=lambda n: n.id)
    b.graph.edges.sort(key=lambda e: (e.source, e.target))
    return b.graph


def _packages(project: Project, module: str, b: _Builder) -> dict[str, str]:
    """Import path -> node id of each internal package with a contract (internal/<name>/contract.go)."""
    out: dict[str, str] = {}
    internal = project.root / "internal"
    for contract in sorted(internal.glob("*/contract.go")) if internal.is_dir() else []:
        name = contract.parent.name
        out[f"{module}/internal/{name}"] = b.node("package", name, contract.relative_to(project.root).as_posix())
    return out


def _imports(files: dict[str, dict[str, Any]], module: str, services: dict[str, str], packages: dict[str, str],
             clients: dict[str, str], b: _Builder) -> None:
    for rel, info in files.items():
        parts = rel.split("/")
        source = None
        if len(parts) > 3 and parts[:2] == ["internal", "handlers"]:
            source = services.get(parts[2])
        elif len(parts) > 2 and parts[0] == "internal" and f"{module}/internal/{parts[1]}" in packages:
            source = packages[f"{module}/internal/{parts[1]}"]
        if source is None:
            continue
        for imp in info["imports"]:
            if imp in packages:
                b.edge(source, packages[imp], rel)
            elif imp in clients:
                b.edge(source, services[clients[imp]], rel)


def _frontends(project: Project, services: dict[str, str], b: _Builder) -> None:
    """frontend->service where the frontend's own sources (not src/gen) call the service's client helper."""
    from engine.authoring.frontends import GEN_DIR, client_name, entries

    helpers = {client_name(key): nid for key, nid in services.items()}
    for entry in entries(project.config, project.config_path):
        node = b.node("frontend", entry.name, entry.dir)
        base = project.root / entry.dir
        if not base.is_dir():
            b.warn(f"frontend {entry.name}: its directory {entry.dir} does not exist")
            continue
        for path in _sources(base, base / GEN_DIR):
            words = set(_identifiers(path.read_text(encoding="utf-8", errors="replace")))
            for helper in sorted(words & set(helpers)):
                b.edge(node, helpers[helper], path.relative_to(project.root).as_posix())


def _sources(base: Path, gen: Path) -> list[Path]:
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in ("node_modules", ".next", "dist", "build")
                             and not d.startswith(".") and Path(dirpath, d) != gen)
        out += [Path(dirpath, n) for n in sorted(filenames) if n.endswith((".ts", ".tsx", ".js", ".jsx"))]
    return out


def _identifiers(text: str) -> list[str]:
    """The identifier-like words of a source text (a client helper's name is one)."""
    word, out = [], []
    for ch in text + " ":
        if ch.isalnum() or ch in "_$":
            word.append(ch)
        elif word:
            out.append("".join(word))
            word = []
    return out


def _environments(project: Project, cfg: Any, env: str | None, services: dict[str, str], workers: dict[str, str],
                  b: _Builder) -> None:
    from engine.environments.evaluate import evaluate_environment
    from engine.environments.files import declared_names
    from engine.errors import EngineError

    binaries = {str(x.get("name")) for x in cfg.binaries}
    frontends = {n.name: n.id for n in b.graph.nodes if n.kind == "frontend"}
    for name in [env] if env else declared_names(project):
        enode = b.node("environment", name, f"deploy/kcl/{name}/main.k")
        try:
            spec = evaluate_environment(project, name)
        except EngineError as exc:
            b.warn(f"environment {name} does not evaluate: {exc.message}")
            continue
        for workload in spec.workloads:
            wnode = b.node("workload", f"{name}/{workload.name}", f"deploy/kcl/{name}/main.k")
            b.edge(enode, wnode, f"deploy/kcl/{name}/main.k")
            main = (workload.build.main if workload.build else None) or ""
            if main.rstrip("/") == f"./cmd/{cfg.name}":  # the service binary serves every service (bootstrap)
                for nid in services.values():
                    b.edge(wnode, nid, main)
            elif workload.name in services:
                b.edge(wnode, services[workload.name], "workload name")
            elif workload.name in workers:
                b.edge(wnode, workers[workload.name], "workload name")
            elif workload.name in frontends:
                b.edge(wnode, frontends[workload.name], "workload name")
            elif workload.name not in binaries:
                b.warn(f"workload {workload.name} of environment {name} names no service, worker, frontend or "
                       f"binary of the project")
