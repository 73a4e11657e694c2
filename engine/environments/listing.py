"""`env list`: every declared environment in one row (docs/reference-env.md#env-list).

A row needs the environment validated (engine.environments.model, pydantic), but only its name,
kind, target type and workload names. That summary is cached beside the KCL evaluation cache,
keyed by the evaluation's own cache key (every KCL input and option) and by the validating code
(these modules' source and the installed pydantic), so a warm `env list` reads two small JSON
files per environment and imports no pydantic (bench/startup.py). Any edit of the KCL, of the
models or an upgrade of pydantic misses it, and the environment is validated again.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.environments.evaluate import environment_spec, evaluate_environment_result
from engine.environments.files import MAIN_FILE, declared_names
from engine.errors import EngineError, KclError
from engine.paths import cached_json, code_identity
from engine.project import Project

if TYPE_CHECKING:
    from engine.environments.model import EnvironmentList

__all__ = ["environment_listing", "list_environments"]

_VALIDATING_SOURCES = ("model.py", "evaluate.py", "listing.py")  # beside this file


def list_environments(project: Project) -> EnvironmentList:
    """`env list`, typed (the dashboard's screens)."""
    from engine.environments.model import EnvironmentList

    return EnvironmentList.model_validate(environment_listing(project))


def environment_listing(project: Project) -> dict[str, Any]:
    """`env list`'s payload as plain data: project, root and one row per declared environment
    (name, kind, target, workloads, file, error: EnvironmentSummary's fields in its order). An
    environment that does not evaluate, validate or match its directory's name has `error` set."""
    rows: list[dict[str, Any]] = []
    for name in declared_names(project):
        rel = str((project.kcl_dir / name / MAIN_FILE).relative_to(project.root))
        try:
            summary = _summary(project, name)
        except EngineError as exc:
            rows.append(_row(name, rel, error=exc.to_dict()))
            continue
        if "error" in summary:
            rows.append(_row(name, rel, error=summary["error"]))
        elif summary["name"] != name:
            mismatch = KclError(
                f"{rel}: declares name {summary['name']!r} but lives in deploy/kcl/{name}/",
                file=rel,
                hint=f'set name = "{name}" or rename the directory',
            )
            rows.append(_row(name, rel, error=mismatch.to_dict()))
        else:
            rows.append(_row(name, rel, kind=summary["kind"], target=summary["target"],
                             workloads=summary["workloads"]))
    return {"project": project.name, "root": str(project.root), "environments": rows}


def _row(name: str, file: str, *, kind: str | None = None, target: str | None = None,
         workloads: list[str] | None = None, error: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "kind": kind, "target": target, "workloads": list(workloads or []), "file": file,
            "error": error}


def _summary(project: Project, name: str) -> dict[str, Any]:
    """{name, kind, target, workloads} of the validated environment, or {error} when it does not
    validate; from the summary cache when its evaluation came from the KCL cache's key."""
    doc, evaluation = evaluate_environment_result(project, name)

    def validate() -> dict[str, Any]:
        try:
            env = environment_spec(project, name, doc)
        except KclError as exc:
            return {"error": exc.to_dict()}
        return {"name": env.name, "kind": env.kind, "target": env.target_type,
                "workloads": [w.name for w in env.workloads]}

    fingerprint = _validator_fingerprint()
    if not evaluation.key or not fingerprint:  # an uncached (impure) evaluation, or unknown code
        return validate()
    summary: dict[str, Any] = cached_json("kcl-summary", f"{evaluation.key}\0{fingerprint}".encode(), validate,
                                          keep=_well_formed)
    return summary


def _well_formed(cached: Any) -> bool:
    if not isinstance(cached, dict):
        return False
    if "error" in cached:
        return isinstance(cached["error"], dict)
    return (isinstance(cached.get("name"), str) and isinstance(cached.get("kind"), str)
            and isinstance(cached.get("target"), str | None) and isinstance(cached.get("workloads"), list)
            and all(isinstance(w, str) for w in cached["workloads"]))


@lru_cache(maxsize=1)
def _validator_fingerprint() -> str:
    """What validation depends on besides the document: these modules and pydantic (core)."""
    here = Path(__file__).parent
    return code_identity(tuple(here / source for source in _VALIDATING_SOURCES), ("pydantic", "pydantic_core"))
