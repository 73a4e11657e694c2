"""`framework cluster up|down|reset|info|status` (docs/reference-cluster.md#commands).

A cluster `cluster up` created is recorded in the checkout (`.framework/clusters/<name>.json`: its
provider, context and where its declaration came from), as a dev stack is, so `status`, `down` and
the Clusters screen know which provider to ask without probing both.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.cluster.config import ClusterConfig, load_config
from engine.cluster.providers import DESCRIPTIONS, ClusterError, Provider, choose_provider, provider
from engine.errors import NotFound
from engine.paths import atomic_write_bytes
from engine.project import Project

RECORDS = Path(".framework") / "clusters"


class ClusterView(BaseModel):
    """One cluster as the commands print it (`--json` payload of up, down, reset, info and status)."""

    name: str
    context: str
    provider: str | None  # k3d or kwok; None: no provider chosen yet (info of a cluster never created)
    provider_description: str | None
    source: str
    env: str | None = None
    state: str = "unknown"  # running, degraded, stopped, absent; info: "not contacted"
    created: bool | None = None  # up/reset: created now (False: it existed, nothing done)
    deleted: bool | None = None  # down
    seconds: float | None = None
    ingress: dict[str, Any] = {}
    servers: int = 1
    agents: int = 0
    components: list[dict[str, Any]] = []
    nodes: list[dict[str, Any]] = []
    ready: bool | None = None


def record_dir(project: Project) -> Path:
    return project.root / RECORDS


def read_record(project: Project, name: str) -> dict[str, Any] | None:
    try:
        doc = json.loads((record_dir(project) / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def records(project: Project) -> list[dict[str, Any]]:
    folder = record_dir(project)
    found = [read_record(project, p.stem) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []
    return [r for r in found if r is not None and "name" in r]


def _write_record(project: Project, cfg: ClusterConfig, prov: Provider) -> None:
    doc = {"name": cfg.name, "provider": prov.name, "context": cfg.context, "source": cfg.source, "env": cfg.env,
           "created_at": time.time(), "config": cfg.model_dump(mode="json", exclude={"k3d"})}
    path = record_dir(project) / f"{cfg.name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, json.dumps(doc, indent=2).encode())


def _forget(project: Project, name: str) -> None:
    for suffix in (".json", ".kwok.yaml", ".pod.log", ".k3d.yaml"):
        (record_dir(project) / f"{name}{suffix}").unlink(missing_ok=True)


def _view(cfg: ClusterConfig, prov_name: str | None, **kw: Any) -> ClusterView:
    return ClusterView(name=cfg.name, context=cfg.context, provider=prov_name,
                       provider_description=DESCRIPTIONS.get(prov_name or ""), source=cfg.source, env=cfg.env,
                       ingress=cfg.ingress.model_dump(), servers=cfg.servers, agents=cfg.agents, **kw)


def resolve(project: Project, env: str | None, config_file: str | None, name: str | None = None) -> ClusterConfig:
    """The declared cluster; with only `name` (`--name` of a recorded cluster), its recorded declaration."""
    if name is not None and env is None and config_file is None:
        rec = read_record(project, name)
        if rec is None:
            raise NotFound(f"no cluster {name!r} was created from this checkout",
                           hint="framework cluster up   (or name the environment: framework cluster status <env>)")
        return ClusterConfig.model_validate(rec["config"])
    cfg = load_config(project, env, config_file)
    rec = read_record(project, cfg.name)
    if env is None and config_file is None and rec is not None:  # what `cluster up` was given, as recorded
        try:
            return ClusterConfig.model_validate(rec.get("config"))
        except ValueError:
            return cfg
    return cfg


def info(project: Project, env: str | None = None, config_file: str | None = None) -> ClusterView:
    """Static: the declared configuration and the recorded provider; no cluster contact."""
    cfg = load_config(project, env, config_file)
    rec = read_record(project, cfg.name)
    wanted = cfg.provider if cfg.provider != "auto" else (rec or {}).get("provider")
    return _view(cfg, wanted, state="not contacted")


def up(project: Project, env: str | None = None, config_file: str | None = None, *, wait: bool = False,
       provider_flag: str | None = None) -> ClusterView:
    """Create the cluster; a no-op success when it exists (`created: false`)."""
    cfg = load_config(project, env, config_file)
    rec = read_record(project, cfg.name)
    prov = choose_provider(cfg, provider_flag, (rec or {}).get("provider"))
    started = time.monotonic()
    if prov.exists(cfg):
        if rec is None:
            _write_record(project, cfg, prov)
        return _view(cfg, prov.name, state="running", created=False, seconds=round(time.monotonic() - started, 3))
    prov.create(cfg, wait=wait, record_dir=record_dir(project))
    _write_record(project, cfg, prov)
    view = status(project, cfg=cfg)
    view.created = True
    view.seconds = round(time.monotonic() - started, 3)
    return view


def down(project: Project, env: str | None = None, config_file: str | None = None, *,
         name: str | None = None, provider_flag: str | None = None) -> ClusterView:
    """Delete the cluster and everything on it: the providers create no nested clusters, and the
    cluster's namespaces go with its datastore; its kubeconfig context and record go too."""
    cfg = resolve(project, env, config_file, name)
    rec = read_record(project, cfg.name)
    prov = choose_provider(cfg, provider_flag, (rec or {}).get("provider"))
    started = time.monotonic()
    existed = prov.exists(cfg)
    if existed:
        prov.delete(cfg)
    _forget(project, cfg.name)
    return _view(cfg, prov.name, state="absent", deleted=existed, seconds=round(time.monotonic() - started, 3))


def reset(project: Project, env: str | None = None, config_file: str | None = None, *, wait: bool = False,
          provider_flag: str | None = None) -> ClusterView:
    down(project, env, config_file, provider_flag=provider_flag)
    return up(project, env, config_file, wait=wait, provider_flag=provider_flag)


def _nodes(context: str) -> list[dict[str, Any]] | None:
    """The context's nodes: read from the API server directly (engine/cluster/kubeapi.py), or through kubectl
    when the kubeconfig needs it (exec plugins, auth providers ...); None when they cannot be read."""
    from engine.cluster import kubeapi

    try:
        doc = kubeapi.get_json(context, "/api/v1/nodes")
    except kubeapi.Unsupported:
        from engine.cluster.providers import run_tool

        argv = ["kubectl", "--context", context, "get", "nodes", "-o", "json", "--request-timeout", "5s"]
        out = run_tool(argv, timeout=15)
        doc = json.loads(out.stdout or "{}") if out.returncode == 0 else None
    if doc is None:
        return None
    rows = []
    for n in doc.get("items") or []:
        cond = {c.get("type"): c.get("status") for c in (n.get("status") or {}).get("conditions") or []}
        rows.append({"name": n["metadata"]["name"], "ready": cond.get("Ready") == "True",
                     "version": ((n.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion")})
    return rows


def status(project: Project, env: str | None = None, config_file: str | None = None, *, name: str | None = None,
           cfg: ClusterConfig | None = None) -> ClusterView:
    """Dynamic: the provider's components (processes or containers), the nodes, readiness."""
    cfg = cfg or resolve(project, env, config_file, name)
    rec = read_record(project, cfg.name)
    if rec is None:
        return _view(cfg, None, state="absent", ready=False)
    prov = provider(rec["provider"])
    components = prov.components(cfg)
    if not components:
        return _view(cfg, prov.name, state="absent", ready=False)
    running = all(c["state"] == "running" for c in components)
    nodes = _nodes(cfg.context) if any(c["state"] == "running" for c in components) else None
    ready = running and nodes is not None and bool(nodes) and all(n["ready"] for n in nodes)
    state = "running" if ready else ("stopped" if not any(c["state"] == "running" for c in components) else "degraded")
    return _view(cfg, prov.name, state=state, components=components, nodes=nodes or [], ready=ready)


def require_running(project: Project, cfg: ClusterConfig) -> str:
    """The context of a cluster this checkout created (exit 1 with the command that creates it, else)."""
    if read_record(project, cfg.name) is None:
        raise ClusterError(f"cluster {cfg.name!r} is not up", hint="framework cluster up"
                           + (f" {cfg.env}" if cfg.env else ""), code="cluster_absent")
    return cfg.context
