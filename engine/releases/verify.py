"""`release verify` and `release where` (docs/reference-deploy.md#commands, with their exit codes).

verify: anonymous reads; `oci` manifest exists at the digest (registry HTTP API v2), `npm`
version exists and its integrity equals the recorded one, `gomod` checksum database has the
version and the hash equals; `file` is always UNVERIFIABLE. Base URLs are configurable:
FRAMEWORK_NPM_REGISTRY, FRAMEWORK_GOSUMDB_URL, FRAMEWORK_INSECURE_REGISTRIES (plain-HTTP hosts).
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel

from engine.project import Project
from engine.releases.images import answer_challenge, parse_image, registry_url
from engine.releases.store import Artifact, load_release

MANIFEST_TYPES = ", ".join(
    (
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    )
)


class ArtifactCheck(BaseModel):
    workload: str
    kind: str
    coordinate: str
    digest: str
    outcome: str  # VERIFIED | FAILED | UNVERIFIABLE | UNREACHABLE
    detail: str = ""


class VerifyResult(BaseModel):
    version: str
    strict: bool
    checks: list[ArtifactCheck]


def oci_manifest(client: Any, art: Artifact, auth: tuple[str, str] | None = None) -> tuple[str, str]:
    """The manifest `HEAD` at the digest. Anonymous unless `auth` (user, password) is given: `release
    verify` reads anonymously (spec); only the deploy preflight passes the `registry login` credential."""
    image = parse_image(art.coordinate)
    url = f"{registry_url(image.host)}/v2/{image.repository}/manifests/{art.digest}"
    host, name = image.host, image.repository
    headers = {"Accept": MANIFEST_TYPES}
    resp = client.head(url, headers=headers)
    if resp.status_code == 401:
        authorization = answer_challenge(client, resp.headers.get("www-authenticate", ""), auth)
        if authorization:
            resp = client.head(url, headers={**headers, "Authorization": authorization})
    if resp.status_code == 200:
        return "VERIFIED", f"manifest present at {art.digest}"
    if resp.status_code == 404:
        return "FAILED", f"no manifest at {art.digest} in {host}/{name}"
    if resp.status_code in (401, 403):
        who = "the stored `registry login` credential" if auth else "anonymous access"
        return "UNREACHABLE", f"registry {host} refused {who} ({resp.status_code})"
    return "UNREACHABLE", f"registry answered {resp.status_code}"


def _npm(client: Any, art: Artifact) -> tuple[str, str]:
    base = os.environ.get("FRAMEWORK_NPM_REGISTRY", "https://registry.npmjs.org").rstrip("/")
    name, _, version = art.coordinate.rpartition("@")
    resp = client.get(f"{base}/{name.replace('/', '%2f')}/{version}")
    if resp.status_code == 404:
        return "FAILED", f"{art.coordinate} does not exist"
    if resp.status_code != 200:
        return "UNREACHABLE", f"registry answered {resp.status_code}"
    integrity = (resp.json().get("dist") or {}).get("integrity")
    if integrity == art.digest:
        return "VERIFIED", "integrity matches"
    return "FAILED", f"integrity differs: registry has {integrity}"


def _gomod(client: Any, art: Artifact) -> tuple[str, str]:
    base = os.environ.get("FRAMEWORK_GOSUMDB_URL", "https://sum.golang.org").rstrip("/")
    module, _, version = art.coordinate.rpartition("@")
    resp = client.get(f"{base}/lookup/{module}@{version}")
    if resp.status_code in (404, 410):
        return "FAILED", f"{art.coordinate} is not in the checksum database"
    if resp.status_code != 200:
        return "UNREACHABLE", f"checksum database answered {resp.status_code}"
    for line in resp.text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == module and parts[1] == version:
            return (
                ("VERIFIED", "hash matches")
                if parts[2] == art.digest
                else ("FAILED", f"hash differs: checksum database has {parts[2]}")
            )
    return "FAILED", f"{art.coordinate} is not in the checksum database"


def verify(
    project: Project, version: str, *, strict: bool = False, timeout: float = 10.0
) -> tuple[VerifyResult, int]:
    import httpx

    release = load_release(project, version)
    checks = []
    with httpx.Client(timeout=timeout, follow_redirects=True) as client:
        for art in release.artifacts + [
            Artifact(workload=n, kind=i["kind"], coordinate=i["coordinate"], digest=i["digest"])
            for n, i in release.images.items()
            if i.get("kind") != "file"
        ]:
            if art.kind == "file":
                outcome, detail = (
                    "UNVERIFIABLE",
                    "file artifacts live on this machine; nothing public to read",
                )
            else:
                try:
                    outcome, detail = {"oci": oci_manifest, "npm": _npm, "gomod": _gomod}[art.kind](client, art)
                except httpx.HTTPError as exc:
                    outcome, detail = "UNREACHABLE", str(exc) or type(exc).__name__
                except (ValueError, KeyError) as exc:
                    outcome, detail = "UNREACHABLE", f"unexpected answer: {exc}"
            checks.append(ArtifactCheck(**art.model_dump(), outcome=outcome, detail=detail))
    outcomes = {c.outcome for c in checks}
    code = (
        1
        if "FAILED" in outcomes or (strict and "UNVERIFIABLE" in outcomes)
        else (2 if "UNREACHABLE" in outcomes else 0)
    )
    return VerifyResult(version=version, strict=strict, checks=checks), code
