"""Render an environment: evaluate its KCL, refuse placeholders, produce runtime objects.

`env render` (docs/reference-env.md#rendering): a YAML stream with `# cluster:` comments; filters `--cluster`, `--kind`,
`--target`; `--no-charts`; `--fail-on-write`. The same render feeds `env shape`, `env diff`,
`env config`, `ci validate-kcl`, deploys (k8s/compose) and dev stacks (the process plan).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError, KclError, UsageError
from engine.project import Project

PLACEHOLDER = "REPLACE_ME_"


class PlaceholderLeft(EngineError):
    """`env new` left a danger knob as REPLACE_ME_*; every render refuses it."""

    code = "placeholder_left"


class RenderWroteFiles(EngineError):
    """The render wrote files (`--fail-on-write`; `env shape` always refuses)."""

    code = "render_wrote_files"


class RenderedObject(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    cluster: str
    kind: str
    name: str
    namespace: str | None = None
    workload: str | None = None
    chart: str | None = None
    document: dict[str, Any]

    @property
    def key(self) -> str:
        return f"{self.cluster}/{self.kind}/{self.namespace or '-'}/{self.name}"


class Rendered(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    project: str
    env: str
    kind: str
    runtime: str
    clusters: list[str]
    options: dict[str, str]
    derived: dict[str, str]
    environment: EnvironmentSpec
    objects: list[RenderedObject]
    wrote: list[str] = []
    compose_name: str | None = None


def find_placeholders(value: Any, path: str = "environment") -> list[str]:
    """Dotted paths of every string still holding a REPLACE_ME_* placeholder."""
    found: list[str] = []
    if isinstance(value, str):
        if PLACEHOLDER in value:
            found.append(f"{path} = {value!r}")
    elif isinstance(value, dict):
        for k, v in value.items():
            found += find_placeholders(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += find_placeholders(v, f"{path}.{i}")
    return found


def cluster_name(spec: EnvironmentSpec, compose_name: str) -> str:
    """The `# cluster:` a render's objects go to: kube context, compose project, hosted or local."""
    if spec.runtime == "hosted":
        return "hosted"
    if spec.runtime == "k8s" and spec.target and spec.target.context:
        return spec.target.context
    if spec.runtime == "compose":
        return compose_name
    return "local"


def _chart_objects(spec: EnvironmentSpec, cluster: str, namespace: str) -> list[RenderedObject]:
    import yaml

    helm = shutil.which("helm")
    if helm is None:
        raise EngineError(
            f"environment {spec.name!r} declares charts ({', '.join(c.name for c in spec.charts)}) "
            "but `helm` is not on PATH",
            hint="install helm, or pass --no-charts",
            code="helm_missing",
        )
    out: list[RenderedObject] = []
    for chart in spec.charts:
        argv = [helm, "template", chart.name, chart.chart, "--namespace", namespace, "--values", "-"]
        if chart.repo:
            argv += ["--repo", chart.repo]
        if chart.version:
            argv += ["--version", chart.version]
        proc = subprocess.run(
            argv, input=json.dumps(chart.values), capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise EngineError(
                f"helm template {chart.name}: {proc.stderr.strip().splitlines()[-1:]}", code="chart_failed"
            )
        for doc in yaml.safe_load_all(proc.stdout):
            if isinstance(doc, dict) and doc.get("kind"):
                meta = doc.get("metadata") or {}
                out.append(
                    RenderedObject(
                        cluster=cluster,
                        kind=str(doc["kind"]),
                        name=str(meta.get("name", "")),
                        namespace=meta.get("namespace") or namespace,
                        chart=chart.name,
                        document=doc,
                    )
                )
    return out


def with_namespace(spec: EnvironmentSpec, namespace: str | None) -> EnvironmentSpec:
    """`spec` with its K8sCluster target's namespace overridden (`env deploy --namespace`); unchanged
    when `namespace` is None or the target is not a cluster."""
    if namespace is None or spec.target is None or spec.target.type != "k8s":
        return spec
    return spec.model_copy(update={"target": spec.target.model_copy(update={"namespace": namespace})})


def render_environment(
    project: Project,
    env: str,
    options: Mapping[str, str] | None = None,
    *,
    image_tag: str | None = None,
    image_digests: Mapping[str, str] | None = None,
    charts: bool = True,
    fail_on_write: bool = False,
    port_offset: int = 0,
    namespace: str | None = None,
) -> Rendered:
    """Evaluate and render `env`. Raises KclError, UsageError, PlaceholderLeft, RenderWroteFiles.
    `namespace` overrides a K8sCluster target's namespace (`env deploy --namespace`)."""
    from engine.environments.derived import derived_options
    from engine.environments.evaluate import environment_spec, evaluate_environment_tracked
    from engine.environments.options import validate_options

    user = validate_options(project, env, options or {})
    derived = derived_options(project, env, image_tag=image_tag, image_digests=image_digests)
    doc, wrote = evaluate_environment_tracked(project, env, user, derived=derived, watch=True)
    rel = f"deploy/kcl/{env}/main.k"
    if fail_on_write and wrote:
        raise RenderWroteFiles(
            f"rendering {env!r} wrote files: {', '.join(wrote)}",
            hint="a render must be pure: remove file writes from the KCL",
        )
    placeholders = find_placeholders(doc)
    if placeholders:
        raise PlaceholderLeft(
            f"{rel}: placeholders left in: {'; '.join(placeholders)}",
            hint=f"replace every REPLACE_ME_* value, then check with `framework env new {env} --check`",
        )
    spec = with_namespace(environment_spec(project, env, doc), namespace)
    if spec.name != env:
        raise KclError(
            f"{rel}: declares name {spec.name!r} but lives in deploy/kcl/{env}/",
            file=rel,
            hint=f'set name = "{env}" or rename the directory',
        )
    namespace = derived["namespace"]
    compose_name = (
        spec.target.project_name if spec.target and spec.target.project_name else None
    ) or namespace
    cluster = cluster_name(spec, compose_name)
    digests = dict(image_digests or {})
    tag = derived["image_tag"]
    objects: list[RenderedObject] = []
    if spec.runtime in ("k8s", "hosted"):
        from engine.environments.render.k8s import render_manifests

        for owner, manifest in render_manifests(
            spec, project=project.key, namespace=namespace, image_tag=tag, digests=digests, root=project.root
        ):
            meta = manifest["metadata"]
            objects.append(
                RenderedObject(
                    cluster=cluster,
                    kind=manifest["kind"],
                    name=meta["name"],
                    namespace=meta.get("namespace"),
                    workload=owner,
                    document=manifest,
                )
            )
        if charts and spec.charts:
            objects += _chart_objects(
                spec, cluster, (spec.target.namespace if spec.target else None) or namespace
            )
    elif spec.runtime == "compose":
        from engine.environments.render.compose import render_services

        for name, service in render_services(spec, image_tag=tag, digests=digests):
            objects.append(
                RenderedObject(
                    cluster=cluster, kind="ComposeService", name=name, workload=name, document=service
                )
            )
    else:
        from engine.environments.render.process import plan_processes

        plan = plan_processes(spec, project=project.key, root=project.root, port_offset=port_offset)
        for proc in plan.processes:
            objects.append(
                RenderedObject(
                    cluster=cluster,
                    kind="Process",
                    name=proc.name,
                    workload=proc.name,
                    document=proc.model_dump(mode="json"),
                )
            )
    return Rendered(
        project=project.name,
        env=env,
        kind=spec.kind,
        runtime=spec.runtime,
        clusters=[cluster],
        options=user,
        derived=derived,
        environment=spec,
        objects=objects,
        wrote=wrote,
        compose_name=compose_name if spec.runtime == "compose" else None,
    )


def select(
    rendered: Rendered,
    *,
    cluster: str | None = None,
    kinds: list[str] | None = None,
    targets: list[str] | None = None,
) -> list[RenderedObject]:
    """Objects matching `--cluster`, `--kind k1,k2` (case-insensitive) and `--target <app>`."""
    if cluster is not None and cluster not in rendered.clusters:
        raise UsageError(
            f"--cluster {cluster}: environment {rendered.env!r} renders to {', '.join(rendered.clusters)}"
        )
    names = {w.name for w in rendered.environment.workloads} | {
        f.name for f in rendered.environment.frontends
    }
    for target in targets or []:
        if target not in names:
            raise UsageError(
                f"--target {target}: not a workload or frontend of {rendered.env!r} "
                f"(declared: {', '.join(sorted(names)) or 'none'})"
            )
    wanted = {k.strip().lower() for k in kinds or [] if k.strip()}
    out = []
    for obj in rendered.objects:
        if cluster is not None and obj.cluster != cluster:
            continue
        if wanted and obj.kind.lower() not in wanted:
            continue
        if targets and obj.workload not in targets:
            continue
        out.append(obj)
    return out


def dump_yaml(doc: Any) -> str:
    """Block-style YAML without anchors (`&id001`), which kubectl accepts but people misread."""
    import yaml

    class Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    return yaml.dump(doc, Dumper=Dumper, sort_keys=False, default_flow_style=False)


def yaml_stream(rendered: Rendered, objects: list[RenderedObject]) -> str:
    """The YAML stream `env render` prints: one document per object, each after `# cluster: <name>`;
    first a `# binding:` comment per binding (`env new --bind`), with what `env deploy` does with it."""
    from engine.environments.bindings import views

    head = "".join(f"# binding: {b.name} -> {b.binder}{f' ({b.bucket})' if b.bucket else ''}; env deploy: {b.deploy}\n"
                   for b in views(rendered.environment))
    return head + _documents(rendered, objects)


def _documents(rendered: Rendered, objects: list[RenderedObject]) -> str:
    def dump(doc: Any) -> str:
        return dump_yaml(doc)

    if rendered.runtime == "compose":
        if not objects:
            return ""
        from engine.environments.render.compose import compose_document

        doc = compose_document(rendered.compose_name or rendered.env, [(o.name, o.document) for o in objects])
        return f"# cluster: {objects[0].cluster}\n{dump(doc)}"
    parts = [f"# cluster: {o.cluster}\n{dump(o.document)}" for o in objects]
    return "---\n".join(parts)
