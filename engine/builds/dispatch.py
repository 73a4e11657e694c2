"""`framework env build <env>` (docs/reference-deploy.md#commands): build, push, cut a release.

Dispatch on the workload's build type: `shell` runs its command, `go` runs `go build`, `docker`
runs `docker build`/`push` (needs a reachable Docker daemon), `remote` needs a control plane.
A workload's `file` artifacts are its declared `build.artifacts`; a process workload declaring
none ships the directory of the program its `run` names (so a release can run it again exactly).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.builds.frontends import build_frontend, carried, collect
from engine.builds.steps import BuildFailed, WorkloadBuild, expand_artifact, run_step
from engine.ci_environment import current_run_id
from engine.environments.model import EnvironmentSpec, Frontend, Workload
from engine.errors import EngineError, InvalidInput
from engine.paths import atomic_write_bytes, ledger_home
from engine.progress import Reporter, tracked
from engine.project import Project
from engine.releases.git import provenance
from engine.releases.store import (
    Artifact,
    Release,
    auto_name,
    cas_put,
    check_version,
    files_digest,
    find_release,
    release_for_tree,
    sha256_file,
    write_release,
)

Progress = Callable[[str], None]


class ToolMissing(EngineError):
    code = "tool_missing"


class BuildResult(BaseModel):
    env: str
    builds: list[WorkloadBuild]
    pushed: bool = False
    release: dict[str, Any] | None = None
    release_created: bool = False
    plan: dict[str, Any] | None = None


def _selected(spec: EnvironmentSpec, targets: list[str] | None, also: tuple[str, ...] = ()) -> list[Workload]:
    """The workloads `--target` names (none: all); `also` are other names it may give (frontends)."""
    workloads = list(spec.workloads)
    if targets:
        names = {w.name for w in workloads}
        unknown = [t for t in targets if t not in names and t not in also]
        if unknown:
            raise InvalidInput(
                f"unknown workload {unknown[0]!r} for --target",
                hint=f"workloads of {spec.name}: {', '.join(sorted(names)) or 'none'}",
            )
        workloads = [w for w in workloads if w.name in targets]
    return workloads


def _docker_ready(what: str) -> None:
    if not shutil.which("docker"):
        raise ToolMissing(
            f"{what}: build type docker needs the `docker` CLI, which is not installed",
            hint="install Docker, or build this workload with type shell or go",
        )
    probe = subprocess.run(
        ["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        raise ToolMissing(
            f"{what}: build type docker needs a Docker daemon, and none is reachable",
            hint=(probe.stderr.strip().splitlines() or ["start the Docker daemon"])[-1],
        )


def build_workload(
    project: Project, env_name: str, workload: Workload, tag: str | None
) -> WorkloadBuild:
    """Run one workload's build. Raises BuildFailed / ToolMissing with a clear message."""
    build = workload.build
    name = workload.name
    if build is None:
        return WorkloadBuild(workload=name, type=None, status="skipped")
    kind = build.type
    what = f"build of workload {name!r} ({kind})"
    start = time.monotonic()
    cwd = project.root / (build.context or ".")
    output = ""
    if kind == "shell":
        if not build.command:
            raise BuildFailed(f"{what}: declares no command")
        output = run_step(build.command, cwd, what, shell=True)
    elif kind == "go":
        if not shutil.which("go"):
            raise ToolMissing(
                f"{what}: build type go needs the `go` toolchain, which is not installed",
                hint="install Go (https://go.dev/dl) or use a shell build",
            )
        out = (build.artifacts or [f"bin/{name}"])[0]
        # `main` names the main package (e.g. ./cmd/api in a generated project; docs/reference-authoring.md#commands).
        output = run_step(
            build.command or ["go", "build", "-o", str(project.root / out), build.main or "."],
            cwd,
            what,
            shell=bool(build.command),
        )
    elif kind == "docker":
        _docker_ready(what)
        image = workload.image
        if not image:
            raise BuildFailed(f"{what}: a docker build needs the workload's `image` reference")
        output = run_step(["docker", "build", "-t", f"{image}:{tag or 'latest'}", "."], cwd, what)
    elif kind == "remote":
        raise ToolMissing(
            f"{what}: remote builds run on a control plane, and this environment declares none reachable",
            hint="use a shell, go or docker build for environments applied from here",
        )
    else:
        raise BuildFailed(f"{what}: unknown build type {kind!r}")
    return WorkloadBuild(
        workload=name,
        type=kind,
        status="built",
        seconds=round(time.monotonic() - start, 3),
        output=output[-2000:],
    )


def workload_files(project: Project, workload: Workload) -> tuple[list[str], list[str]]:
    """(declared artifact paths, missing ones). Undeclared: the directory of the program `run` names."""
    declared = list(workload.build.artifacts) if workload.build else []
    if declared:
        return declared, [a for a in declared if not expand_artifact(project, a)]
    for arg in workload.run or []:
        candidate = project.root / arg
        if "/" in arg and candidate.is_file():
            return [str(Path(arg).parent)], []
    return [], []


def collect_artifacts(
    project: Project, workloads: list[Workload], frontends: list[Frontend] | None = None
) -> tuple[list[Artifact], dict[str, dict[str, str]], list[str], dict[str, Path]]:
    """Artifacts, per-image digests, missing declared artifacts, and file sources (digest -> path),
    of `workloads` and of the `frontends` the release carries (engine.builds.frontends)."""
    artifacts: list[Artifact] = []
    images: dict[str, dict[str, str]] = {}
    missing: list[str] = []
    sources: dict[str, Path] = {}
    for w in workloads:
        paths, gone = workload_files(project, w)
        missing += [f"{w.name}: {g}" for g in gone]
        entries: list[tuple[str, str]] = []
        for rel in paths:
            for file in expand_artifact(project, rel):
                digest = sha256_file(file)
                coord = str(file.relative_to(project.root.resolve()))
                sources[digest] = file
                entries.append((coord, digest))
                artifacts.append(Artifact(workload=w.name, kind="file", coordinate=coord, digest=digest))
        if entries:
            images[w.name] = {
                "kind": "file",
                "coordinate": f"files:{w.name}",
                "digest": files_digest(entries),
            }
        elif w.image:
            images[w.name] = {"kind": "oci", "coordinate": w.image, "digest": ""}
        elif w.run:  # a program with no files of its own (e.g. a system binary) is still tracked
            images[w.name] = {"kind": "file", "coordinate": f"files:{w.name}", "digest": files_digest([])}
    if frontends:
        more, fimages, fmissing, fsources = collect(project, frontends)
        artifacts += more
        images.update(fimages)
        missing += fmissing
        sources.update(fsources)
    return artifacts, images, missing, sources


def push_record_path(project: Project, env: str) -> Path:
    return ledger_home() / "projects" / project.key / "pushes" / f"{env}.json"


def record_push(
    project: Project, env: str, artifacts: list[Artifact], images: dict[str, dict[str, str]]
) -> None:
    doc = {"artifacts": [a.model_dump() for a in artifacts], "images": images, "pushed_at": time.time()}
    atomic_write_bytes(push_record_path(project, env), json.dumps(doc, indent=2).encode())


def harvest_push(
    project: Project, env: str, names: list[str]
) -> tuple[list[Artifact], dict[str, dict[str, str]]]:
    """`--no-build --release`: the digests an earlier push recorded."""
    try:
        doc = json.loads(push_record_path(project, env).read_bytes())
    except FileNotFoundError as exc:
        raise EngineError(
            f"no earlier push recorded for {env!r}; nothing to harvest",
            hint=f"run `framework env build {env} --push` first",
            code="no_push",
        ) from exc
    artifacts = [Artifact.model_validate(a) for a in doc["artifacts"] if a["workload"] in names]
    images = {k: v for k, v in doc["images"].items() if k in names}
    return artifacts, images


def prepare_release(
    project: Project,
    workloads: list[Workload],
    version: str | None,
    *,
    artifacts: list[Artifact] | None = None,
    images: dict[str, dict[str, str]] | None = None,
    frontends: list[Frontend] | None = None,
) -> tuple[Release, dict[str, Path]]:
    """The release a cut would record (nothing written). Auto name reused when the tree matches."""
    sources: dict[str, Path] = {}
    if artifacts is None or images is None:
        artifacts, images, missing, sources = collect_artifacts(project, workloads, frontends)
        if missing:
            raise EngineError(
                f"cut refused: declared artifact missing: {'; '.join(missing)}",
                code="artifact_missing",
                hint="build first, or fix build.artifacts",
            )
    unpushed = [n for n, i in images.items() if not i.get("digest")]
    if unpushed:
        raise EngineError(
            f"cut refused: image of {', '.join(unpushed)} has no pushed digest",
            code="artifact_missing",
            hint="push it first (needs a Docker daemon)",
        )
    prov = provenance(project.root)
    now = time.time()
    if version is None:
        tree = prov.tree or files_digest([(a.coordinate, a.digest) for a in artifacts]).split(":")[1]
        reuse = release_for_tree(project, tree)
        if reuse is not None:
            return reuse, sources
        version = auto_name(tree, now)
    check_version(version)
    rel = Release(
        version=version,
        project=project.key,
        created_at=now,
        provenance=prov,
        artifacts=artifacts,
        images=images,
        run_id=current_run_id(),
    )
    return rel, sources


def cut_release(project: Project, release: Release, sources: dict[str, Path]) -> tuple[Release, bool]:
    """Store `file` artifacts in the content-addressed store, then write the release file."""
    from engine.releases.store import cas_has

    existing = find_release(project, release.version)
    if existing is not None:
        return write_release(project, release)  # no-op or refused, before touching the store
    for art in release.artifacts:
        if art.kind == "file" and not cas_has(art.digest):
            src = sources.get(art.digest)
            if src is None:
                raise EngineError(
                    f"cut refused: {art.coordinate} ({art.digest}) is not in the file store",
                    code="artifact_missing",
                    hint="push it first: framework env build <env> --push",
                )
            cas_put(src, art.digest)
    return write_release(project, release)


def env_build(
    project: Project,
    env: str,
    *,
    targets: list[str] | None = None,
    push: bool = False,
    release: str | None = None,
    tag: str | None = None,
    no_build: bool = False,
    plan: bool = False,
    progress: Progress | None = None,
    spec: EnvironmentSpec | None = None,
    report: Reporter | None = None,
) -> BuildResult:
    """`env build <env>` with every flag docs/reference-deploy.md#commands lists (see module doc).
    A caller that has evaluated the environment already (a deploy) passes its `spec`, so it is not evaluated twice.
    `report` hears the steps (engine/progress.py): task `build` per workload and frontend, `push` per artifact."""
    from engine.environments.evaluate import evaluate_environment

    say = progress or (lambda _m: None)
    if release is not None:
        check_version(release)
        push = True  # --release implies --push
        if tag is not None and tag != release:
            raise InvalidInput(
                f"--tag {tag!r} conflicts with --release {release!r}",
                hint="drop --tag: a release tags its images with its version",
            )
    if no_build and release is None:
        raise InvalidInput(
            "--no-build only makes sense with --release (it harvests digests of an earlier push)"
        )
    spec = spec if spec is not None else evaluate_environment(project, env)
    frontends = carried(spec, targets)  # the control plane serves them from the release
    workloads = _selected(spec, targets, tuple(f.name for f in frontends))
    result = BuildResult(env=env, builds=[])
    if plan:
        artifacts, images, missing, _ = collect_artifacts(project, workloads, frontends)
        existing = find_release(project, release) if release else None
        result.plan = {
            "version": release,
            "workloads": [w.name for w in workloads],
            "frontends": [f.name for f in frontends],
            "builds": [
                {"workload": w.name, "type": w.build.type if w.build else None} for w in workloads
            ],
            "artifacts": [a.model_dump() for a in artifacts],
            "missing": missing,
            "exists": existing is not None,
            "conflict": bool(
                existing
                and not no_build
                and sorted((a.coordinate, a.digest) for a in existing.artifacts)
                != sorted((a.coordinate, a.digest) for a in artifacts)
            ),
        }
        return result
    if not no_build:
        units: list[Workload | Frontend] = [*workloads, *frontends]
        for unit in tracked(report, "build", units, lambda u: u.name):
            if isinstance(unit, Frontend):
                say(f"building frontend {unit.name}" + ("" if unit.build else " (no build)"))
                result.builds.append(build_frontend(project, unit))
            else:
                say(f"building {unit.name} ({unit.build.type if unit.build else 'no build'})")
                result.builds.append(build_workload(project, env, unit, tag or release))
    if push and not no_build:
        artifacts, images, missing, sources = collect_artifacts(project, workloads, frontends)
        if missing:
            raise EngineError(
                f"push refused: declared artifact missing: {'; '.join(missing)}", code="artifact_missing"
            )
        for art in tracked(report, "push", artifacts, lambda a: a.coordinate):
            cas_put(sources[art.digest], art.digest)
        say(f"pushed {len(artifacts)} file artifact(s) to the file store")
        record_push(project, env, artifacts, images)
        result.pushed = True
    if release is not None:
        if no_build:
            artifacts, images = harvest_push(project, env, [w.name for w in workloads] + [f.name for f in frontends])
            rel, sources = prepare_release(project, workloads, release, artifacts=artifacts, images=images)
            declared = {w.name for w in workloads if workload_files(project, w)[0] or w.image}
            declared |= {f.name for f in frontends}
            absent = sorted(declared - set(images))
            if absent:
                raise EngineError(
                    f"cut refused: the earlier push holds no artifact for {', '.join(absent)}",
                    code="artifact_missing",
                    hint=f"run `framework env build {env} --push`",
                )
        else:
            rel, sources = prepare_release(project, workloads, release, frontends=frontends)
        stored, created = cut_release(project, rel, sources)
        say(("cut release " if created else "release already cut with these artifacts: ") + stored.version)
        result.release = stored.model_dump(mode="json")
        result.release_created = created
    return result
