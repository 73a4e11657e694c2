"""Releases on the control plane (docs/reference-hosted.md#releases-and-artifacts).

A release is uploaded as its manifest (the same document `.framework/releases/<version>.json`
holds) after its `file` artifacts, which are stored content-addressed per organization (the
server checks every byte against the digest). Immutable: the same version over the same artifacts
is a no-op, over different ones refused (409). `framework cloud releases` lists the caller's
organization's; no request carries an organization field (it is the credential's).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from engine.controlplane import tables as t
from engine.errors import EngineError, ReleaseConflict, UsageError
from engine.serverstore import store

MAX_BLOB = 64 * 1024 * 1024


def _digest_ok(digest: str) -> bool:
    return digest.startswith("sha256:") and len(digest) == 71 and all(c in "0123456789abcdef" for c in digest[7:])


def missing_blobs(engine: Engine, org_id: str, digests: list[str]) -> list[str]:
    wanted = sorted({d for d in digests if isinstance(d, str)})
    with store.read(engine) as conn:
        have = {r[0] for r in conn.execute(select(t.blobs.c.digest).where(t.blobs.c.org_id == org_id,
                                                                         t.blobs.c.digest.in_(wanted))).all()}
    return [d for d in wanted if d not in have]


def put_blob(engine: Engine, org_id: str, digest: str, data: bytes) -> dict[str, Any]:
    if not _digest_ok(digest):
        raise UsageError(f"invalid digest {digest!r}", hint="sha256:<64 hex>")
    if len(data) > MAX_BLOB:
        raise UsageError(f"artifact larger than {MAX_BLOB} bytes")
    actual = "sha256:" + hashlib.sha256(data).hexdigest()
    if actual != digest:
        raise UsageError(f"artifact bytes hash to {actual}, not {digest}; nothing stored")
    try:
        with store.write(engine) as conn:
            if conn.execute(select(t.blobs.c.digest).where(t.blobs.c.org_id == org_id,
                                                           t.blobs.c.digest == digest)).first() is None:
                conn.execute(insert(t.blobs).values(org_id=org_id, digest=digest, size=len(data),
                                                    content=base64.b64encode(data).decode(), created_at=store.now_us()))
    except IntegrityError:
        pass  # stored by a racing upload of the same bytes
    return {"digest": digest, "size": len(data)}


def blob(engine: Engine, org_id: str, digest: str) -> bytes | None:
    with store.read(engine) as conn:
        row = conn.execute(select(t.blobs.c.content).where(t.blobs.c.org_id == org_id,
                                                          t.blobs.c.digest == digest)).first()
    return base64.b64decode(row[0]) if row else None


def fingerprint(doc: dict[str, Any]) -> str:
    """What makes two cuts of one version the same release: its artifacts and per-image digests."""
    arts = sorted((a.get("workload"), a.get("kind"), a.get("coordinate"), a.get("digest"))
                  for a in doc.get("artifacts") or [])
    body = json.dumps({"artifacts": arts, "images": doc.get("images") or {}}, sort_keys=True)
    return "sha256:" + hashlib.sha256(body.encode()).hexdigest()


def put_release(engine: Engine, org_id: str, doc: dict[str, Any]) -> dict[str, Any]:
    version = str(doc.get("version") or "")
    if not version or not isinstance(doc.get("artifacts"), list) or not isinstance(doc.get("images"), dict):
        raise UsageError("a release manifest needs version, artifacts and images")
    files = [str(a.get("digest")) for a in doc["artifacts"] if isinstance(a, dict) and a.get("kind") == "file"]
    missing = missing_blobs(engine, org_id, files)
    if missing:
        raise UsageError(f"release {version}: {len(missing)} file artifact(s) not uploaded: {missing[0]}",
                         hint="upload them first (PUT /v1/blobs/<digest>)")
    fp = fingerprint(doc)
    try:
        with store.write(engine) as conn:
            row = conn.execute(select(t.releases.c.fingerprint).where(t.releases.c.org_id == org_id,
                                                                      t.releases.c.version == version)).first()
            if row is not None:
                if row[0] != fp:
                    raise ReleaseConflict(f"release {version!r} already exists on the control plane with different "
                                          "artifacts; releases are immutable", hint="cut a new version instead",
                                          code="conflict")  # the /v1 API's code for it (409)
                return {"version": version, "created": False}
            conn.execute(insert(t.releases).values(org_id=org_id, version=version,
                                                   project=str(doc.get("project") or ""), fingerprint=fp,
                                                   document=json.dumps(doc, sort_keys=True),
                                                   created_at=float(doc.get("created_at") or 0)))
    except IntegrityError:
        return put_release(engine, org_id, doc)  # a racing upload won: compare with what it stored
    return {"version": version, "created": True}


def get_release(engine: Engine, org_id: str, version: str) -> dict[str, Any] | None:
    with store.read(engine) as conn:
        row = conn.execute(select(t.releases.c.document).where(t.releases.c.org_id == org_id,
                                                              t.releases.c.version == version)).first()
    return json.loads(row[0]) if row else None


def list_releases(engine: Engine, org_id: str) -> list[dict[str, Any]]:
    """Newest first: version, project, created_at, provenance, workloads."""
    with store.read(engine) as conn:
        rows = conn.execute(select(t.releases.c.document).where(t.releases.c.org_id == org_id)
                            .order_by(t.releases.c.created_at.desc(), t.releases.c.version.desc())).all()
    out = []
    for (document,) in rows:
        doc = json.loads(document)
        prov = doc.get("provenance") or {}
        out.append({"version": doc["version"], "project": doc.get("project"), "created_at": doc.get("created_at"),
                    "commit": prov.get("commit"), "branch": prov.get("branch"), "dirty": bool(prov.get("dirty")),
                    "workloads": sorted(doc.get("images") or {})})
    return out


def replicas_of(entry: dict[str, Any]) -> int:
    """The instances a bundle entry runs: a static frontend none (the gateway serves its files)."""
    return 0 if entry.get("output") == "static" else int(entry.get("replicas") or 1)


def release_files(root: Path, org_id: str, version: str, name: str) -> Path:
    """Where a workload's (or frontend's) file artifacts of a release are laid out on this host."""
    return root / "releases" / org_id / version / name


def materialize(engine: Engine, root: Path, org_id: str, release: dict[str, Any], name: str) -> Path:
    """The file artifacts of `name` in `release`, byte for byte from the store, under
    release_files(...) (temp dir, then rename: a reader sees all of them or none); done once."""
    dest = release_files(root, org_id, release["version"], name)
    if (dest / ".complete").exists():
        return dest
    tmp = dest.with_name(f".{dest.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.mkdir(parents=True)
    try:
        for art in release.get("artifacts") or []:
            if art.get("workload") != name or art.get("kind") != "file":
                continue
            data = blob(engine, org_id, art["digest"])
            if data is None:
                raise EngineError(f"artifact {art['coordinate']} ({art['digest']}) is missing on the control plane")
            target = tmp / art["coordinate"]
            if not target.resolve().is_relative_to(tmp.resolve()):
                raise EngineError(f"artifact coordinate {art['coordinate']!r} leaves the workload directory")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        (tmp / ".complete").write_text(release["version"])
        if (dest / ".complete").exists():  # laid out meanwhile (the gateway and the converger)
            shutil.rmtree(tmp, ignore_errors=True)
            return dest
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest
