"""Releases in `.framework/releases/<version>.json` and the content-addressed file store.

Releases are immutable and environment-agnostic (a promotion pins the same digests everywhere): re-cutting a version
over the same artifacts is a no-op, over different ones refused. `file` artifacts are copied
into a content-addressed store on this machine so any release can be deployed again byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from engine import names
from engine.errors import EngineError, InvalidInput, ReleaseConflict
from engine.paths import atomic_write_bytes, ledger_home
from engine.project import Project
from engine.releases.git import Provenance

RELEASES_DIR = Path(".framework") / "releases"
ARTIFACT_KINDS = ("oci", "npm", "gomod", "file")
# The largest `file` artifact a control plane stores (engine.controlplane.releases MAX_BLOB, on the
# platform side of the import contracts): a hosted cut and an upload refuse a bigger one by name.
MAX_FILE_ARTIFACT = 64 * 1024 * 1024


class ReleaseNotFound(EngineError):
    code = "release_not_found"


class Artifact(BaseModel):
    """One artifact of a release: per kind a coordinate and a digest."""

    workload: str
    kind: str
    coordinate: str
    digest: str


class Release(BaseModel):
    version: str
    project: str
    created_at: float
    provenance: Provenance
    artifacts: list[Artifact]
    # per workload ("image") the digest promotions freeze: oci digest, or one digest over its files
    images: dict[str, dict[str, str]]
    run_id: str | None = None  # the CI run that cut it (engine/ci_environment.py); None outside CI

    def same_artifacts(self, other: Release) -> bool:
        key = lambda a: (a.workload, a.kind, a.coordinate, a.digest)  # noqa: E731
        return (
            sorted(map(key, self.artifacts)) == sorted(map(key, other.artifacts))
            and self.images == other.images
        )


def check_version(version: str) -> str:
    return names.check(version, "release version", pattern=names.RELEASE_RE, error=InvalidInput,
                       allowed="letters, digits, '.', '_', '+' and '-', starting with a letter or digit (e.g. v1.2.3)")


def auto_name(tree: str, now: float | None = None) -> str:
    """`<YYYYMMDD>.<HHMMSS>-<tree12>`, in UTC (the auto release name)."""
    return (
        time.strftime("%Y%m%d.%H%M%S", time.gmtime(now if now is not None else time.time())) + f"-{tree[:12]}"
    )


def release_path(project: Project, version: str) -> Path:
    return project.root / RELEASES_DIR / f"{check_version(version)}.json"


def load_release(project: Project, version: str) -> Release:
    path = release_path(project, version)
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError as exc:
        raise ReleaseNotFound(
            f"release {version!r} not found ({path.relative_to(project.root)} does not exist)",
            hint="list releases with `framework release list`, or cut one with "
            "`framework env build <env> --release <version>`",
        ) from exc
    except (OSError, ValueError) as exc:
        raise EngineError(f"release file {path} is unreadable: {exc}", code="release_unreadable") from exc
    return Release.model_validate(data)


def find_release(project: Project, version: str) -> Release | None:
    try:
        return load_release(project, version)
    except ReleaseNotFound:
        return None


def list_releases(project: Project) -> list[Release]:
    out = []
    for path in sorted((project.root / RELEASES_DIR).glob("*.json")):
        try:
            out.append(Release.model_validate(json.loads(path.read_bytes())))
        except (OSError, ValueError):
            continue
    return sorted(out, key=lambda r: (r.created_at, r.version))


class ReleaseSummary(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import

    version: str
    created_at: float
    commit: str | None = None
    branch: str | None = None
    dirty: bool = False
    workloads: list[str] = []


class ReleaseList(BaseModel):
    """`framework release list`: every release cut in this checkout, newest first."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import

    project: str
    releases: list[ReleaseSummary]


def release_list(project: Project) -> ReleaseList:
    rows = [
        ReleaseSummary(
            version=r.version,
            created_at=r.created_at,
            commit=r.provenance.commit,
            branch=r.provenance.branch,
            dirty=r.provenance.dirty,
            workloads=sorted(r.images),
        )
        for r in reversed(list_releases(project))
    ]
    return ReleaseList(project=project.key, releases=rows)


def release_for_tree(project: Project, tree: str) -> Release | None:
    """An auto-named release whose tree matches the checkout is reused (docs/reference-deploy.md#env-deploy: forms)."""
    for rel in reversed(list_releases(project)):
        if rel.provenance.tree == tree and rel.version.endswith(f"-{tree[:12]}"):
            return rel
    return None


def write_release(project: Project, release: Release) -> tuple[Release, bool]:
    """Record a release; (existing, False) when the same artifacts were already cut under that name."""
    existing = find_release(project, release.version)
    if existing is not None:
        if existing.same_artifacts(release):
            return existing, False
        raise ReleaseConflict(
            f"release {release.version!r} already exists with different artifacts; releases are immutable",
            hint="cut a new version instead",
        )
    path = release_path(project, release.version)
    atomic_write_bytes(
        path, (json.dumps(release.model_dump(mode="json"), indent=2, sort_keys=True) + "\n").encode()
    )
    return release, True


# -- content-addressed store for `file` artifacts ------------------------------------------


def cas_root() -> Path:
    return ledger_home() / "cas" / "sha256"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def cas_path(digest: str) -> Path:
    hexd = digest.split(":", 1)[1]
    return cas_root() / hexd[:2] / hexd


def cas_put(path: Path, digest: str) -> None:
    target = cas_path(digest)
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.copyfile(path, tmp)
    if sha256_file(tmp) != digest:  # the file changed under us: never store wrong bytes under a digest
        tmp.unlink(missing_ok=True)
        raise EngineError(f"{path} changed while it was being stored; build again", code="artifact_changed")
    os.chmod(tmp, os.stat(path).st_mode & 0o755 | 0o444)
    os.replace(tmp, target)


def cas_has(digest: str) -> bool:
    return cas_path(digest).is_file()


def materialize(release: Release, workload: str, dest: Path) -> Path:
    """Lay out a workload's `file` artifacts of `release` from the store, byte for byte, under dest."""
    done = dest / ".complete"
    if done.exists():
        return dest
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for art in release.artifacts:
        if art.workload != workload or art.kind != "file":
            continue
        src = cas_path(art.digest)
        if not src.is_file():
            raise EngineError(
                f"release {release.version}: {art.coordinate} ({art.digest}) is missing from the "
                f"file store {cas_root()}",
                code="artifact_missing",
                hint="the store lives on the machine that cut the release; cut it again here",
            )
        target = tmp / art.coordinate
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        os.chmod(target, os.stat(src).st_mode | 0o200)
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / ".complete").write_text(release.version)
    shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, dest)
    return dest


def files_digest(entries: list[tuple[str, str]]) -> str:
    """One digest over a workload's files: sha256 of sorted `path\\tdigest` lines."""
    body = "".join(f"{p}\t{d}\n" for p, d in sorted(entries))
    return "sha256:" + hashlib.sha256(body.encode()).hexdigest()


def release_dict(release: Release) -> dict[str, Any]:
    return release.model_dump(mode="json")
