"""`env diff`: object hashes of a fresh render against the last recorded bundle
(docs/reference-env.md#shape-diff-config-new).

Read-only. With no recorded bundle the declared shape is the baseline: every object is listed
as `declared`. Per environment a diff guard status: `ok` (matches the bundle, or nothing
recorded), `stale` (the declared shape moved since the last deploy), `impure` (the render wrote
files), `error` (KCL or render failed).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from engine.errors import EngineError, UsageError
from engine.project import Project

Change = Literal["added", "removed", "changed", "unchanged", "declared"]


class ObjectChange(BaseModel):
    key: str
    cluster: str
    kind: str
    name: str
    namespace: str | None = None
    change: Change
    recorded: str | None = None
    current: str | None = None


class EnvDiff(BaseModel):
    env: str
    status: Literal["ok", "stale", "impure", "error"]
    baseline: Literal["bundle", "declared", "none"]
    changes: list[ObjectChange] = []
    counts: dict[str, int] = {}
    error: dict[str, Any] | None = None


class DiffReport(BaseModel):
    project: str
    environments: list[EnvDiff]

    @property
    def failing(self) -> list[EnvDiff]:
        return [e for e in self.environments if e.status != "ok"]


def _recorded_objects(bundle: dict[str, Any], charts: bool) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for obj in (bundle.get("shape") or {}).get("objects") or []:
        if not isinstance(obj, dict) or (obj.get("chart") and not charts):
            continue
        key = f"{obj.get('cluster')}/{obj.get('kind')}/{obj.get('namespace') or '-'}/{obj.get('name')}"
        out[key] = obj
    return out


def diff_environment(project: Project, env: str, *, charts: bool = False) -> EnvDiff:
    from engine.environments.bundles import last_bundle
    from engine.environments.render.pipeline import RenderWroteFiles
    from engine.environments.shape import compute_shape

    try:
        shape = compute_shape(project, env, charts=charts)
    except RenderWroteFiles as exc:
        return EnvDiff(env=env, status="impure", baseline="none", error=exc.to_dict())
    except UsageError:
        raise
    except EngineError as exc:
        return EnvDiff(env=env, status="error", baseline="none", error=exc.to_dict())
    current = {o.key: o for o in shape.shape.objects}
    bundle = last_bundle(project.key, env)
    changes: list[ObjectChange] = []
    if bundle is None:
        changes = [
            ObjectChange(
                key=k,
                cluster=o.cluster,
                kind=o.kind,
                name=o.name,
                namespace=o.namespace,
                change="declared",
                current=o.hash,
            )
            for k, o in current.items()
        ]
        return EnvDiff(
            env=env, status="ok", baseline="declared", changes=changes, counts={"declared": len(changes)}
        )
    recorded = _recorded_objects(bundle, charts)
    for key, obj in current.items():
        old = recorded.get(key)
        change: Change = (
            "added" if old is None else ("unchanged" if old.get("hash") == obj.hash else "changed")
        )
        changes.append(
            ObjectChange(
                key=key,
                cluster=obj.cluster,
                kind=obj.kind,
                name=obj.name,
                namespace=obj.namespace,
                change=change,
                recorded=None if old is None else old.get("hash"),
                current=obj.hash,
            )
        )
    for key, old in recorded.items():
        if key not in current:
            changes.append(
                ObjectChange(
                    key=key,
                    cluster=str(old.get("cluster")),
                    kind=str(old.get("kind")),
                    name=str(old.get("name")),
                    namespace=old.get("namespace"),
                    change="removed",
                    recorded=old.get("hash"),
                )
            )
    counts: dict[str, int] = {}
    for c in changes:
        counts[c.change] = counts.get(c.change, 0) + 1
    stale = any(c.change != "unchanged" for c in changes)
    return EnvDiff(
        env=env, status="stale" if stale else "ok", baseline="bundle", changes=changes, counts=counts
    )


def diff_environments(
    project: Project, env: str | None = None, *, all_envs: bool = False, charts: bool = False
) -> DiffReport:
    from engine.environments.evaluate import declared_names, env_file

    if env is not None and all_envs:
        raise UsageError("give an environment or --all, not both")
    if env is not None:
        env_file(project, env)
        names = [env]
    else:
        names = declared_names(project)
    return DiffReport(
        project=project.name, environments=[diff_environment(project, n, charts=charts) for n in names]
    )
