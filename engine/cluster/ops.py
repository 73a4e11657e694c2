"""`framework cluster urls|logs|instances|reload` (docs/reference-cluster.md#commands): what runs on
a cluster `cluster up` created, read and changed through kubectl pinned to its `k3d-<name>` context."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from engine.cluster.config import ClusterConfig
from engine.cluster.lifecycle import read_record, require_running
from engine.cluster.providers import ClusterError, relayed, run_tool
from engine.environments.render.k8s import LABEL_ENV, LABEL_NAME, LABEL_PART_OF
from engine.errors import InvalidInput
from engine.project import Project


def _kubectl_json(context: str, *args: str) -> dict[str, Any]:
    out = run_tool(["kubectl", "--context", context, *args, "-o", "json", "--request-timeout", "10s"], timeout=30)
    if out.returncode != 0:
        raise ClusterError(f"cannot read the cluster {context}", hint=relayed("kubectl", out), exit_code=2,
                           code="cluster_unreachable")
    return json.loads(out.stdout or "{}")


class UrlRow(BaseModel):
    namespace: str
    ingress: str
    host: str
    path: str
    service: str
    url: str


class Urls(BaseModel):
    cluster: str
    provider: str | None
    ingress_enabled: bool
    served: bool  # a controller answers these URLs (k3d's Traefik); kwok runs no ingress controller
    notice: str | None = None
    urls: list[UrlRow] = []


def urls(project: Project, cfg: ClusterConfig) -> Urls:
    rec = read_record(project, cfg.name) or {}
    prov = rec.get("provider")
    if not cfg.ingress.enabled:
        return Urls(cluster=cfg.name, provider=prov, ingress_enabled=False, served=False,
                    notice=f"ingress is disabled for cluster {cfg.name} ({cfg.source}): no URLs to list")
    context = require_running(project, cfg)
    port = cfg.ingress.http_port
    rows = []
    for ing in _kubectl_json(context, "get", "ingress", "--all-namespaces").get("items") or []:
        meta = ing["metadata"]
        for rule in (ing.get("spec") or {}).get("rules") or []:
            host = rule.get("host") or "localhost"
            for p in ((rule.get("http") or {}).get("paths") or []):
                svc = ((p.get("backend") or {}).get("service") or {}).get("name", "")
                where = host if port in (None, 80) else f"{host}:{port}"
                rows.append(UrlRow(namespace=meta["namespace"], ingress=meta["name"], host=host,
                                   path=p.get("path") or "/", service=svc, url=f"http://{where}{p.get('path') or '/'}"))
    served = prov == "k3d"
    notice = None if served else ("kwok runs no ingress controller: these URLs are declared by the Ingress objects "
                                  "and not served on this machine")
    return Urls(cluster=cfg.name, provider=prov, ingress_enabled=True, served=served, notice=notice, urls=rows)


class Instance(BaseModel):
    namespace: str
    env: str | None
    project: str | None
    phase: str
    workloads: int


class Instances(BaseModel):
    cluster: str
    context: str
    instances: list[Instance]


def instances(project: Project, cfg: ClusterConfig) -> Instances:
    """The managed dev namespaces: those the framework's render labels with an environment."""
    context = require_running(project, cfg)
    nss = _kubectl_json(context, "get", "namespaces", "-l", LABEL_ENV).get("items") or []
    deps = _kubectl_json(context, "get", "deployments,statefulsets,daemonsets", "--all-namespaces",
                         "-l", LABEL_ENV).get("items") or []
    counts: dict[str, int] = {}
    for d in deps:
        counts[d["metadata"]["namespace"]] = counts.get(d["metadata"]["namespace"], 0) + 1
    rows = []
    for n in nss:
        name, labels = n["metadata"]["name"], n["metadata"].get("labels") or {}
        rows.append(Instance(namespace=name, env=labels.get(LABEL_ENV), project=labels.get(LABEL_PART_OF),
                             phase=(n.get("status") or {}).get("phase", "Unknown"), workloads=counts.get(name, 0)))
    return Instances(cluster=cfg.name, context=context, instances=sorted(rows, key=lambda r: r.namespace))


class LogLine(BaseModel):
    pod: str
    namespace: str
    line: str


def _pods(context: str, service: str | None) -> list[tuple[str, str]]:
    selector = f"{LABEL_NAME}={service}" if service else LABEL_ENV
    items = _kubectl_json(context, "get", "pods", "--all-namespaces", "-l", selector).get("items") or []
    return sorted((p["metadata"]["namespace"], p["metadata"]["name"]) for p in items)


def logs(project: Project, cfg: ClusterConfig, *, service: str | None = None, tail: int = 50,
         follow: bool = False, on_line: Callable[[LogLine], None] | None = None) -> list[LogLine]:
    """The last `tail` lines of each pod of `service` (every managed workload without it); with `follow`,
    then every new line until interrupted (each line to `on_line` as it comes). On a kwok cluster the
    lines are KWOK's simulated log (no container runs)."""
    if tail < 0:
        raise InvalidInput("--tail is a number of lines, 0 or more")
    context = require_running(project, cfg)
    pods = _pods(context, service)
    if not pods:
        raise ClusterError(f"no pods {'of service ' + repr(service) if service else 'of a managed workload'} "
                           f"on cluster {cfg.name}", hint="framework cluster instances", code="not_found")
    lines: list[LogLine] = []
    lock = threading.Lock()

    def read(ns: str, pod: str) -> None:
        argv = ["kubectl", "--context", context, "logs", "-n", ns, pod, "--all-containers", f"--tail={tail}"]
        if follow:
            argv.append("--follow")
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = LogLine(pod=pod, namespace=ns, line=raw.rstrip("\n"))
            with lock:
                lines.append(line)
                if on_line is not None:
                    on_line(line)
        err = proc.stderr.read() if proc.stderr else ""
        if proc.wait() != 0 and err.strip():
            with lock:
                lines.append(LogLine(pod=pod, namespace=ns, line=f"(kubectl: {err.strip().splitlines()[-1]})"))

    threads = [threading.Thread(target=read, args=pod, daemon=True) for pod in pods]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return lines


class Reload(BaseModel):
    cluster: str
    env: str
    namespace: str
    dry_run: bool
    image_tag: str | None
    objects: list[str]
    phase: str | None = None  # the rollout's end: ready, failed, timed_out (None under --dry-run)
    resources: list[dict[str, Any]] = []


def reload(project: Project, cfg: ClusterConfig, env: str, *, image_tag: str | None = None, dry_run: bool = False,
           timeout: float = 300.0) -> tuple[Reload, int]:
    """Re-render `env`'s KCL (with `image_tag`), apply it to the cluster and wait its rollout. The dev loop:
    no build, no release, no promotion (`env deploy` records those)."""
    from engine.environments.evaluate import evaluate_environment
    from engine.environments.render.pipeline import render_environment

    spec = evaluate_environment(project, env)
    if spec.target is None or spec.target.type != "k8s" or spec.target.context != cfg.context:
        raise InvalidInput(f"environment {env!r} does not deploy to cluster {cfg.name} (context {cfg.context})",
                           hint="name an environment whose K8sCluster.context is " + cfg.context)
    rendered = render_environment(project, env, image_tag=image_tag, fail_on_write=True)
    namespaces = [o.name for o in rendered.objects if o.kind == "Namespace"]
    namespace = namespaces[0] if namespaces else rendered.derived["namespace"]
    names = [f"{o.kind}/{o.name}" for o in rendered.objects]
    result = Reload(cluster=cfg.name, env=env, namespace=namespace, dry_run=dry_run, image_tag=image_tag, objects=names)
    if dry_run:
        return result, 0
    require_running(project, cfg)
    from engine.runtime.k8s import Kube
    from engine.runtime.k8s_runtime import K8sRuntime
    from engine.runtime.process import RolloutOptions

    manifests = [dict(o.document, **{"__workload__": o.workload}) for o in rendered.objects]
    runtime = K8sRuntime(Kube(cfg.context), env, namespace, manifests)
    end, resources = runtime.rollout(RolloutOptions(timeout=timeout, stability_window=0.5))
    result.phase = end
    result.resources = [r.model_dump(mode="json", include={"name", "kind", "outcome", "ready_replicas", "message"})
                        for r in resources]
    # the rollout exit codes of `env deploy` (docs/reference-deploy.md): 1 DEGRADED, 8 the wait timed out
    return result, {"ready": 0, "timed_out": 8}.get(end, 1)


class ClusterOverview(BaseModel):
    """One recorded cluster as the Clusters screen shows it: status, namespaces, URLs, a logs tail
    (the engine calls of `cluster status`, `cluster instances`, `cluster urls`, `cluster logs --no-follow`)."""

    status: dict[str, Any]
    instances: list[dict[str, Any]] = []
    urls: list[dict[str, Any]] = []
    urls_notice: str | None = None
    logs: list[dict[str, Any]] = []
    problems: list[str] = []


def overview(project: Project, *, tail: int = 5) -> list[ClusterOverview]:
    """Every cluster this checkout created; the reads of a running one that fail are named, not raised."""
    from engine.cluster.lifecycle import records, status
    from engine.errors import EngineError

    found = []
    for rec in records(project):
        view = status(project, name=rec["name"])
        item = ClusterOverview(status=view.model_dump(mode="json"))
        if view.state == "running":
            cfg = ClusterConfig.model_validate(rec["config"])
            try:
                item.instances = [i.model_dump() for i in instances(project, cfg).instances]
                u = urls(project, cfg)
                item.urls, item.urls_notice = [r.model_dump() for r in u.urls], u.notice
                item.logs = [ln.model_dump() for ln in logs(project, cfg, tail=tail)]
            except EngineError as exc:
                item.problems.append(exc.message)
        found.append(item)
    return found
