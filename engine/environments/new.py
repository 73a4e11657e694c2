"""`env new <name>`: scaffold deploy/kcl/<name>/main.k (docs/reference-env.md#shape-diff-config-new).

`--from <env>` copies that environment's declaration; `--bind <name>=hosted|cluster|bucket`
records where a workload or frontend runs. Danger knobs (anything naming real infrastructure:
cluster context, control-plane endpoint, registry host, route hosts, buckets) become
`REPLACE_ME_*` placeholders, which `--check` and every render refuse until they are replaced.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError, UsageError
from engine.project import Project

BINDERS = ("hosted", "cluster", "bucket")
_ENV_NAME = re.compile(r"^[a-z][a-z0-9-]{0,30}$")


class NewEnvironment(BaseModel):
    project: str
    env: str
    file: str
    created: bool
    placeholders: list[str]
    from_env: str | None = None


class Schema:
    """A KCL schema instance to emit: `framework.<name> { field = value ... }`."""

    def __init__(self, schema: str, /, **fields: Any) -> None:
        self.name = schema
        self.fields = {k: v for k, v in fields.items() if v not in (None, [], {})}


def _kcl(value: Any, indent: int) -> str:
    pad = "    " * indent
    inner = "    " * (indent + 1)
    if isinstance(value, Schema):
        if not value.fields:
            return f"framework.{value.name} {{}}"
        body = "".join(f"{inner}{k} = {_kcl(v, indent + 1)}\n" for k, v in value.fields.items())
        return f"framework.{value.name} {{\n{body}{pad}}}"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        if all(not isinstance(v, Schema | dict | list) for v in value):
            return "[" + ", ".join(_kcl(v, indent) for v in value) + "]"
        return "[\n" + "".join(f"{inner}{_kcl(v, indent + 1)}\n" for v in value) + f"{pad}]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        body = "".join(f"{inner}{_key(k)} = {_kcl(v, indent + 1)}\n" for k, v in value.items())
        return "{\n" + body + pad + "}"
    raise TypeError(type(value).__name__)


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) else _kcl(k, 0)


def parse_bindings(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, binder = pair.partition("=")
        if not sep or not name or binder not in BINDERS:
            raise UsageError(
                f"--bind {pair!r}: expected <name>=<binder> with binder one of {', '.join(BINDERS)}"
            )
        out[name] = binder
    return out


def _workload_from(w: Any, hosts: dict[str, str]) -> Schema:
    def host(h: str) -> str:
        return hosts.setdefault(h, f"REPLACE_ME_HOST_{len(hosts) + 1}")

    build = None
    if w.build:
        build = Schema("Build", **{k: v for k, v in w.build.model_dump().items()})
    return Schema(
        "Workload",
        name=w.name,
        image=w.image,
        artifact=w.artifact,
        build=build,
        run=w.run,
        cwd=w.cwd,
        env=dict(w.env),
        secrets=list(w.secrets),
        ports=[Schema("Port", name=p.name, port=p.port) for p in w.ports],
        health=Schema("HealthCheck", **w.health.model_dump()) if w.health else None,
        replicas=w.replicas,
        routes=[Schema("Route", host=host(r.host), path=r.path, port=r.port) for r in w.routes],
    )


def _from_env(spec: EnvironmentSpec, name: str) -> dict[str, Any]:
    hosts: dict[str, str] = {}
    target = None
    if spec.target is not None:
        if spec.target.type == "k8s":
            target = Schema(
                "K8sCluster", context="REPLACE_ME_CONTEXT", ingress_class=spec.target.ingress_class
            )
        elif spec.target.type == "compose":
            target = Schema("Compose")
        else:
            target = Schema("Process")
    cp = None
    if spec.control_plane is not None:
        cp = Schema(
            "ControlPlane",
            endpoint="REPLACE_ME_ENDPOINT" if spec.control_plane.endpoint else None,
            token_env=spec.control_plane.token_env,
            registry_host="REPLACE_ME_REGISTRY_HOST" if spec.control_plane.registry_host else None,
        )
    frontends = [
        Schema(
            "Frontend",
            name=f.name,
            dir=f.dir,
            build=f.build,
            dev=f.dev,
            output=f.output,
            port=f.port,
            routes=[
                Schema(
                    "Route",
                    host=hosts.setdefault(r.host, f"REPLACE_ME_HOST_{len(hosts) + 1}"),
                    path=r.path,
                    port=r.port,
                )
                for r in f.routes
            ],
        )
        for f in spec.frontends
    ]
    return {
        "name": name,
        "kind": spec.kind,
        "target": target,
        "control_plane": cp,
        "workloads": [_workload_from(w, hosts) for w in spec.workloads],
        "frontends": frontends,
        "bindings": {k: b.binder for k, b in spec.bindings.items()},
    }


def _from_services(project: Project, name: str, bindings: dict[str, str]) -> dict[str, Any]:
    hosted = bool(bindings) and all(b == "hosted" for b in bindings.values())
    workloads = []
    for svc in project.config.get("services") or []:
        if not isinstance(svc, dict) or not svc.get("name"):
            continue
        svc_name = str(svc["name"])
        workloads.append(
            Schema(
                "Workload",
                name=svc_name,
                image=f"REPLACE_ME_REGISTRY/{project.key}/{svc_name}",
                build=Schema("Build", type="docker", context=str(svc.get("path") or f"services/{svc_name}")),
                ports=[Schema("Port", port=int(svc.get("port") or 8080))],
                health=Schema("HealthCheck"),
            )
        )
    return {
        "name": name,
        "kind": "hosted" if hosted else "self_managed",
        "target": None if hosted else Schema("K8sCluster", context="REPLACE_ME_CONTEXT"),
        "control_plane": Schema("ControlPlane") if hosted else None,
        "workloads": workloads,
        "frontends": [],
        "bindings": {},
    }


def environment_source(fields: dict[str, Any], bindings: dict[str, str], note: str) -> str:
    merged = dict(fields.pop("bindings") or {})
    merged.update(bindings)
    bind = {
        k: Schema("Binding", binder=v, bucket="REPLACE_ME_BUCKET" if v == "bucket" else None)
        for k, v in merged.items()
    }
    env = Schema("Environment", **fields, bindings=bind)
    return (
        f"import framework\n\n# {note}\n# Replace every REPLACE_ME_* value, then run `framework env new "
        f"{fields['name']} --check`.\nenvironment = {_kcl(env, 0)}\n"
    )


def new_environment(
    project: Project,
    name: str,
    *,
    from_env: str | None = None,
    binds: list[str] | None = None,
    check: bool = False,
) -> NewEnvironment:
    from engine.environments.evaluate import env_file, evaluate_document, evaluate_environment
    from engine.environments.render.pipeline import PlaceholderLeft, find_placeholders
    from engine.paths import atomic_write_bytes

    if not _ENV_NAME.match(name):
        raise UsageError(
            f"{name!r} is not a valid environment name (lowercase letters, digits and -, "
            "starting with a letter, at most 31 characters)"
        )
    path = project.kcl_dir / name / "main.k"
    rel = str(path.relative_to(project.root))
    if check:
        if from_env or binds:
            raise UsageError("--check reads an existing environment; it takes no --from or --bind")
        env_file(project, name)
        left = find_placeholders(evaluate_document(project, name))
        if left:
            raise PlaceholderLeft(
                f"{rel}: placeholders left in: {'; '.join(left)}", hint="replace every REPLACE_ME_* value"
            )
        return NewEnvironment(project=project.name, env=name, file=rel, created=False, placeholders=[])
    if path.exists():
        raise EngineError(
            f"{rel} already exists",
            hint=f"edit it, or check it with `framework env new {name} --check`",
            code="environment_exists",
        )
    bindings = parse_bindings(binds or [])
    if from_env is not None:
        env_file(project, from_env)
        fields = _from_env(evaluate_environment(project, from_env), name)
        note = f"Created by `framework env new {name} --from {from_env}`."
    else:
        fields = _from_services(project, name, bindings)
        note = f"Created by `framework env new {name}` from the services in framework.yaml."
    known = {w.fields["name"] for w in fields["workloads"]} | {f.fields["name"] for f in fields["frontends"]}
    unknown = sorted(set(bindings) - known)
    if unknown:
        raise UsageError(
            f"--bind {', '.join(unknown)}: not a workload or frontend "
            f"(known: {', '.join(sorted(known)) or 'none'})"
        )
    source = environment_source(fields, bindings, note)
    atomic_write_bytes(path, source.encode())
    try:  # never leave a file that does not evaluate
        left = find_placeholders(evaluate_document(project, name))
    except EngineError:
        path.unlink(missing_ok=True)
        if not any(path.parent.iterdir()):
            path.parent.rmdir()
        raise
    return NewEnvironment(
        project=project.name, env=name, file=rel, created=True, placeholders=left, from_env=from_env
    )
