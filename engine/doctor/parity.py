"""`doctor parity <svc> [--env dev]`: the service in host mode (the dev stack's process, as `env up`
runs it) against cluster mode (the same environment rendered for a `framework.K8sCluster`).

Each divergence is classified:
- `secret-channel`: a secret reaches the process from different channels (the shell's environment in
  host mode, the `<svc>-secrets` Secret in cluster mode). Expected; never fails the command.
- `bug-class`: the service would behave differently: a variable only one mode sets, a value that
  differs, a loopback address (in a pod it reaches only that pod), or a port of another workload
  (in host mode that workload listens on its port + this worktree's block offset).
Exit 1 on any bug-class divergence; 0 when only secret-channel divergences remain.
"""

from __future__ import annotations

import os
import re
from typing import Any

from pydantic import BaseModel

from engine.errors import UsageError
from engine.project import Project

BUG, SECRET = "bug-class", "secret-channel"
LOOPBACK = re.compile(r"(?:^|[/@\s=])(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::(\d+))?")
PORT_IN_VALUE = re.compile(r":(\d{2,5})\b")


class Divergence(BaseModel):
    name: str
    kind: str  # bug-class | secret-channel
    host: str | None
    cluster: str | None
    why: str


class ParityReport(BaseModel):
    env: str
    service: str
    port_offset: int
    host: dict[str, str]
    cluster: dict[str, str]
    divergences: list[Divergence]
    verdict: str  # parity | secret-channel-only | bug-class


def _port_offset(project: Project) -> int:
    from engine.devstack.blocks import BLOCK_SIZE, read_entries
    from engine.devstack.checkout import detect

    entry = read_entries(project).get(detect(project.root).key)
    return entry.block * BLOCK_SIZE if entry else 0


def _host_env(spec: Any, project: Project, service: str, offset: int) -> dict[str, str]:
    from engine.environments.render.process import plan_processes

    planned = plan_processes(spec, project=project.key, root=project.root, port_offset=offset).process(service)
    env = dict(planned.env)
    for name in planned.secrets:
        state = "set" if os.environ.get(name) else "unset"
        env[name] = f"(secret from this shell's environment: {state})"
    return env


def _cluster_env(spec: Any, project: Project, service: str) -> dict[str, str]:
    from engine.environments.model import Target
    from engine.environments.render.k8s import render_manifests

    # Cluster mode renders images; a host-only workload has none, and the image is not what we compare.
    workloads = [w if w.image else w.model_copy(update={"image": f"parity.invalid/{w.name}"}) for w in spec.workloads]
    target = spec.target if spec.target and spec.target.type == "k8s" else Target(type="k8s", namespace=spec.name)
    k8s = spec.model_copy(update={"target": target, "workloads": workloads})
    manifests = [m for owner, m in render_manifests(k8s, project=project.key, namespace=spec.name,
                                                     image_tag="parity", digests={}) if owner == service]
    env: dict[str, str] = {}
    for m in manifests:
        if m["kind"] == "ConfigMap":
            env.update(m["data"])
    for m in manifests:
        if m["kind"] == "Deployment":
            for var in m["spec"]["template"]["spec"]["containers"][0].get("env", []):
                ref = (var.get("valueFrom") or {}).get("secretKeyRef")
                env[var["name"]] = (f"(secret from Secret {ref['name']}, key {ref['key']})" if ref
                                    else str(var.get("value", "")))
    return env


def _value_risk(name: str, value: str, own_ports: set[int], others: dict[int, str], offset: int) -> str | None:
    loop = LOOPBACK.search(value)
    if loop and not (loop.group(2) and int(loop.group(2)) in own_ports):
        return (f"{name} names a loopback address ({loop.group(1)}): in cluster mode it reaches only this pod; "
                "use the other workload's Service name")
    if offset:
        for port in (int(p) for p in PORT_IN_VALUE.findall(value)):
            if port in others:
                return (f"{name} names port {port} of {others[port]}: in host mode that workload listens on "
                        f"{port + offset} (this worktree's block offset)")
    return None


def parity(project: Project, service: str, env: str = "dev") -> tuple[ParityReport, int]:
    from engine.environments.evaluate import evaluate_environment

    spec = evaluate_environment(project, env)
    names = [w.name for w in spec.workloads]
    if service not in names:
        raise UsageError(f"{service!r} is not a workload of {env!r}", hint=f"workloads: {', '.join(names) or 'none'}")
    workload = next(w for w in spec.workloads if w.name == service)
    offset = _port_offset(project)
    host, cluster = _host_env(spec, project, service, offset), _cluster_env(spec, project, service)
    own = {p.port for p in workload.ports}
    others = {p.port: w.name for w in spec.workloads if w.name != service for p in w.ports}
    out: list[Divergence] = []
    for name in sorted(set(host) | set(cluster)):
        h, c = host.get(name), cluster.get(name)
        if name in workload.secrets:
            out.append(Divergence(name=name, kind=SECRET, host=h, cluster=c,
                                  why="the secret reaches the process through a different channel in each mode"))
        elif h is None or c is None:
            only = "host" if c is None else "cluster"
            out.append(Divergence(name=name, kind=BUG, host=h, cluster=c, why=f"set only in {only} mode"))
        elif name == "PORT" and h.isdigit() and c.isdigit() and int(h) - offset == int(c):
            continue  # the block offset: the same port in this worktree's block
        elif h != c:
            out.append(Divergence(name=name, kind=BUG, host=h, cluster=c, why="the value differs"))
        else:
            risk = _value_risk(name, h, own, others, offset)
            if risk:
                out.append(Divergence(name=name, kind=BUG, host=h, cluster=c, why=risk))
    bug = any(d.kind == BUG for d in out)
    verdict = BUG if bug else ("secret-channel-only" if out else "parity")
    report = ParityReport(env=env, service=service, port_offset=offset, host=host, cluster=cluster,
                          divergences=out, verdict=verdict)
    return report, (1 if bug else 0)
