"""The declared shape of an environment (docs/reference-env.md#shape-diff-config-new): what a deploy records as its
bundle.

A projection of the render: kind, workloads, secret names, domains, clusters and one hash per
rendered object, plus provenance. It carries no secret values (renders only name secrets).
`env deploy` records `compute_shape(...).model_dump(mode="json")` with engine.environments.bundles; `env
diff` compares a fresh shape's object hashes against that record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from engine.environments.bindings import BindingView, views
from engine.git import git_output
from engine.project import Project

if TYPE_CHECKING:
    from engine.environments.render.pipeline import Rendered


class ShapeObject(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    cluster: str
    kind: str
    name: str
    namespace: str | None = None
    workload: str | None = None
    chart: str | None = None
    hash: str

    @property
    def key(self) -> str:
        return f"{self.cluster}/{self.kind}/{self.namespace or '-'}/{self.name}"


class ShapeWorkload(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    name: str
    image: str | None = None
    replicas: int
    ports: list[int]
    secrets: list[str]
    routes: list[str]


class ShapeBody(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    kind: str
    runtime: str
    clusters: list[str]
    workloads: list[ShapeWorkload]
    frontends: list[str]
    secret_names: list[str]
    domains: list[str]
    objects: list[ShapeObject]
    bindings: list[BindingView] = []  # where `env new --bind` placed workloads or frontends


class Provenance(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    tree: str | None = None
    commit: str | None = None
    branch: str | None = None
    dirty: bool | None = None
    worktree: str = ""
    file: str
    kcl_lib: str
    package_hash: str
    options: dict[str, str]
    image_tag: str


class Shape(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    project: str
    env: str
    kind: str
    shape: ShapeBody
    provenance: Provenance

    def object_hashes(self) -> dict[str, str]:
        return {o.key: o.hash for o in self.shape.objects}


def object_hash(document: Any) -> str:
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def _package_hash() -> str:
    from engine.kcl.evaluate import _input_files
    from engine.paths import kcl_package_dir

    digest = hashlib.sha256()
    root = kcl_package_dir()
    for path in _input_files(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return "sha256:" + digest.hexdigest()


def compute_shape(
    project: Project,
    env: str,
    options: Mapping[str, str] | None = None,
    *,
    image_tag: str | None = None,
    image_digests: Mapping[str, str] | None = None,
    charts: bool = True,
) -> Shape:
    """Render `env` and project it; fails (RenderWroteFiles, exit 1) if the render wrote files."""
    from engine.environments.render.pipeline import render_environment

    rendered = render_environment(
        project,
        env,
        options,
        image_tag=image_tag,
        image_digests=image_digests,
        charts=charts,
        fail_on_write=True,
    )
    return shape_of_rendered(project, env, rendered, image_digests)


def shape_of_rendered(
    project: Project, env: str, rendered: Rendered, image_digests: Mapping[str, str] | None = None
) -> Shape:
    """The declared shape of an environment already rendered (a deploy renders once and reuses it)."""
    from engine.environments.render.k8s import image_reference
    from engine.kcl.evaluate import KCL_LIB_VERSION

    spec = rendered.environment
    digests = dict(image_digests or {})
    workloads = [
        ShapeWorkload(
            name=w.name,
            image=image_reference(w, rendered.derived["image_tag"], digests),
            replicas=w.replicas,
            ports=[p.port for p in w.ports],
            secrets=sorted(w.secrets),
            routes=[f"{r.host}{r.path}" for r in w.routes],
        )
        for w in spec.workloads
    ]
    domains = sorted(
        {r.host for w in spec.workloads for r in w.routes}
        | {r.host for f in spec.frontends for r in f.routes}
    )
    objects = [
        ShapeObject(
            cluster=o.cluster,
            kind=o.kind,
            name=o.name,
            namespace=o.namespace,
            workload=o.workload,
            chart=o.chart,
            hash=object_hash(o.document),
        )
        for o in rendered.objects
    ]
    body = ShapeBody(
        kind=spec.kind,
        runtime=spec.runtime,
        clusters=rendered.clusters,
        workloads=workloads,
        frontends=[f.name for f in spec.frontends],
        secret_names=sorted({s for w in spec.workloads for s in w.secrets}),
        domains=domains,
        objects=objects,
        bindings=views(spec),
    )
    root = project.root
    status = git_output(root, "status", "--porcelain", "--untracked-files=no")
    heads = (git_output(root, "rev-parse", "HEAD^{tree}", "HEAD") or "").split()  # one git start, not two
    provenance = Provenance(
        tree=heads[0] if len(heads) == 2 else None,
        commit=heads[1] if len(heads) == 2 else None,
        branch=rendered.derived["branch"] or None,
        dirty=None if status is None else bool(status),
        worktree=rendered.derived["worktree"],
        file=f"deploy/kcl/{env}/main.k",
        kcl_lib=KCL_LIB_VERSION,
        package_hash=_package_hash(),
        options=rendered.options,
        image_tag=rendered.derived["image_tag"],
    )
    return Shape(project=project.name, env=env, kind=spec.kind, shape=body, provenance=provenance)
