"""A hosted frontend's files in the release: `file` artifacts of the frontend's built `output`
(docs/reference-domains.md#a-hosted-frontends-files).

An environment the control plane runs (hosted, or declaring framework.ControlPlane) carries each of
its frontends' built output in every release cut for it: the files under `<dir>/<output>`,
content-addressed like a workload's files, one `images` entry per frontend (`files:<name>`, one digest
over its files) so promotions freeze it and deploy plans compare it. The cut runs the frontend's
`build` command first (unless `--no-build`), refuses a missing or empty output directory by name, and
refuses a file over the control plane's artifact cap (64 MiB) by name.
"""

from __future__ import annotations

import time
from pathlib import Path

from engine.builds.steps import BuildFailed, WorkloadBuild, expand_artifact, run_step
from engine.environments.model import EnvironmentSpec, Frontend
from engine.errors import ArtifactTooLarge, InvalidInput
from engine.project import Project
from engine.releases.store import MAX_FILE_ARTIFACT, Artifact, files_digest, sha256_file


def carried(spec: EnvironmentSpec, targets: list[str] | None = None) -> list[Frontend]:
    """The frontends whose output a release of `spec` carries: those of an environment the control
    plane runs (local dev stacks serve frontends with their dev servers), scoped by `--target`."""
    if not spec.on_control_plane:
        return []
    return [f for f in spec.frontends if not targets or f.name in targets]


def build_frontend(project: Project, frontend: Frontend) -> WorkloadBuild:
    """Run the frontend's declared `build` command in its directory (none: nothing to run)."""
    if not frontend.build:
        return WorkloadBuild(workload=frontend.name, type=None, status="skipped")
    start = time.monotonic()
    cwd = project.root / frontend.dir
    if not cwd.is_dir():
        raise BuildFailed(f"build of frontend {frontend.name!r}: its directory {frontend.dir} does not exist")
    output = run_step(frontend.build, cwd, f"build of frontend {frontend.name!r} (shell)", shell=True)
    return WorkloadBuild(workload=frontend.name, type="shell", status="built",
                         seconds=round(time.monotonic() - start, 3), output=output[-2000:])


def frontend_files(project: Project, frontend: Frontend) -> tuple[list[Path], str | None]:
    """The files of the frontend's output directory, or why there are none (missing, not a
    directory, empty); a file over the cap is refused at once, by name."""
    rel = frontend.output_path
    if rel.startswith("..") or Path(rel).is_absolute():
        raise InvalidInput(f"frontend {frontend.name!r}: output {rel!r} lies outside the project")
    where = project.root / rel
    files = expand_artifact(project, rel) if where.is_dir() else []
    if not files:
        what = "is empty" if where.is_dir() else ("is not a directory" if where.exists() else "does not exist")
        return [], f"frontend {frontend.name}: output directory {rel} {what}"
    for file in files:
        size = file.stat().st_size
        if size > MAX_FILE_ARTIFACT:
            raise ArtifactTooLarge(
                f"cut refused: frontend {frontend.name!r}: {file.relative_to(project.root.resolve())} is {size} "
                f"bytes; a file artifact holds at most 64 MiB ({MAX_FILE_ARTIFACT} bytes)",
                hint="split or compress it, or serve it from elsewhere")
    return files, None


def collect(project: Project, frontends: list[Frontend]) -> tuple[
        list[Artifact], dict[str, dict[str, str]], list[str], dict[str, Path]]:
    """Artifacts, per-frontend image entries, missing outputs and file sources (digest -> path)."""
    artifacts: list[Artifact] = []
    images: dict[str, dict[str, str]] = {}
    missing: list[str] = []
    sources: dict[str, Path] = {}
    root = project.root.resolve()
    for f in frontends:
        entries = []
        files, problem = frontend_files(project, f)
        if problem:
            missing.append(problem + (f" (run its build: {f.build})" if f.build else ""))
        for file in files:
            digest = sha256_file(file)
            coord = str(file.relative_to(root))
            sources[digest] = file
            entries.append((coord, digest))
            artifacts.append(Artifact(workload=f.name, kind="file", coordinate=coord, digest=digest))
        if entries:
            images[f.name] = {"kind": "file", "coordinate": f"files:{f.name}",
                              "digest": files_digest(entries)}
    return artifacts, images, missing, sources
