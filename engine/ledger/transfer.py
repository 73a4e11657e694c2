"""`ledger show`, `ledger where`, `ledger export`, `ledger import` (docs/reference-deploy.md#commands).

Export writes `<dir>/<env>.jsonl` (one promotion per line, gates inline): a verification aid,
not a backup. Import reads that format from `--from-file-ledger <dir>`, or committed
`.framework/promotions/<env>.jsonl` history with `--from-git [--rev]` (never the working tree);
it is a dry run unless `--apply`, idempotent, and refuses an environment already holding promotions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.errors import EngineError
from engine.ledger.store import Gate, Ledger, ledger_path
from engine.paths import atomic_write_bytes
from engine.project import Project

LEGACY_DIR = ".framework/promotions"


class LedgerShow(BaseModel):
    project: str
    path: str
    promotions: list[dict[str, Any]]
    applies: list[dict[str, Any]]
    sessions: list[dict[str, Any]]


def show(project: Project, env: str | None = None, limit: int = 50) -> LedgerShow:
    if env is not None:
        from engine.ledger.protocol import open_ledger

        with open_ledger(project, env) as opened:
            hosted = opened.hosted
            if hosted is not None:  # the control plane holds this environment's ledger
                doc = hosted.ledger_doc(env, limit)
                return LedgerShow(project=project.key, path=f"control plane {hosted.path}",
                                  promotions=doc["promotions"], applies=[{**a, "env": env} for a in doc["applies"]],
                                  sessions=[])
    with Ledger.open(project.key) as ledger:
        envs = [env] if env else ledger.envs()
        promotions = [p.model_dump(mode="json") for e in envs for p in ledger.history(e, limit=limit)]
        promotions.sort(key=lambda p: p["seq"], reverse=True)
        return LedgerShow(
            project=project.key,
            path=str(ledger.path),
            promotions=promotions[:limit],
            applies=[a.model_dump() for a in ledger.applies(env, limit=limit)],
            sessions=[s.model_dump() for s in ledger.list_sessions(env)],
        )


class LedgerWhere(BaseModel):
    env: str
    backend: str  # machine | control_plane
    location: str
    declaration: str


def where(project: Project, env: str) -> LedgerWhere:
    """Which backend holds the ledger and the declaration that chose it (the promotion ledger location)."""
    from engine.environments.evaluate import env_file, evaluate_environment

    rel = str(env_file(project, env).relative_to(project.root))
    spec = evaluate_environment(project, env)
    cp = spec.control_plane
    if cp is not None:
        return LedgerWhere(
            env=env,
            backend="control_plane",
            location=cp.endpoint or "default hosted service",
            declaration=f"{rel}: framework.ControlPlane",
        )
    return LedgerWhere(
        env=env,
        backend="machine",
        location=f"{ledger_path()} (project {project.key!r})",
        declaration=f"{rel}: no framework.ControlPlane declared",
    )


class ExportResult(BaseModel):
    dir: str
    files: dict[str, int]


def export(project: Project, directory: str, env: str | None = None) -> ExportResult:
    out = Path(directory)
    files: dict[str, int] = {}
    with Ledger.open(project.key) as ledger:
        for e in [env] if env else ledger.envs():
            rows = list(reversed(ledger.history(e, limit=10**9)))
            lines = [json.dumps(p.model_dump(mode="json"), sort_keys=True) for p in rows]
            atomic_write_bytes(out / f"{e}.jsonl", ("\n".join(lines) + ("\n" if lines else "")).encode())
            files[e] = len(rows)
    return ExportResult(dir=str(out), files=files)


class ImportEnv(BaseModel):
    env: str
    found: int
    imported: int = 0
    already_present: int = 0
    refused: str | None = None


class ImportResult(BaseModel):
    source: str
    applied: bool
    environments: list[ImportEnv]


def _parse(text: str, where: str) -> list[dict[str, Any]]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise EngineError(f"{where}:{n}: not JSON: {exc}", code="invalid_input") from exc
        if not isinstance(row, dict) or not row.get("id") or not row.get("release"):
            raise EngineError(
                f"{where}:{n}: a promotion needs at least `id` and `release`", code="invalid_input"
            )
        out.append(row)
    return out


def _read_source(
    project: Project, from_git: bool, rev: str, file_ledger: str | None
) -> tuple[str, dict[str, list]]:
    from engine.releases.git import is_repo, list_tree, rev_exists, show_file

    found: dict[str, list[dict[str, Any]]] = {}
    if from_git:
        if not is_repo(project.root):
            raise EngineError("--from-git: the project is not a git checkout", code="invalid_input")
        if not rev_exists(project.root, rev):
            raise EngineError(
                f"--from-git: revision {rev!r} not found",
                code="invalid_input",
                hint="fetch it, or pass --rev <ref>",
            )
        for name in list_tree(project.root, rev, LEGACY_DIR):
            if name.endswith(".jsonl"):
                text = show_file(project.root, rev, f"{LEGACY_DIR}/{name}") or ""
                found[name[:-6]] = _parse(text, f"{rev}:{LEGACY_DIR}/{name}")
        return f"git {rev}:{LEGACY_DIR}", found
    assert file_ledger is not None
    base = Path(file_ledger)
    if not base.is_dir():
        raise EngineError(f"--from-file-ledger {file_ledger}: not a directory", code="invalid_input")
    for path in sorted(base.glob("*.jsonl")):
        found[path.stem] = _parse(path.read_text(), str(path))
    return str(base), found


def import_ledger(
    project: Project,
    *,
    from_git: bool = False,
    rev: str = "origin/main",
    file_ledger: str | None = None,
    apply: bool = False,
) -> ImportResult:
    if from_git == (file_ledger is not None):
        raise EngineError(
            "give exactly one source: --from-git or --from-file-ledger <dir>", code="invalid_input"
        )
    source, found = _read_source(project, from_git, rev, file_ledger)
    result = ImportResult(source=source, applied=apply, environments=[])
    with Ledger.open(project.key) as ledger:
        for env, rows in sorted(found.items()):
            item = ImportEnv(env=env, found=len(rows))
            result.environments.append(item)
            present = {r["id"] for r in rows if ledger.get(r["id"]) is not None}
            item.already_present = len(present)
            if present and len(present) == len(rows):
                continue  # idempotent: this import already happened
            if ledger.count(env) > 0:
                item.refused = (
                    f"environment {env!r} already holds promotions; import refuses to merge histories"
                )
                continue
            if not apply:
                item.imported = len(rows)
                continue
            previous = None
            for row in sorted(rows, key=lambda r: (r.get("seq") or 0, r.get("created_at") or 0)):
                gates = [Gate.model_validate(g) for g in row.get("gates") or []]
                ledger.append_promotion(
                    env,
                    str(row["release"]),
                    row.get("images") or {},
                    direction=str(row.get("direction") or "UNKNOWN"),
                    expected_current=previous,
                    plan_digest=row.get("plan_digest"),
                    gates=[g for g in gates if g.at_promote],
                    check_in_flight=False,
                    promotion_id=str(row["id"]),
                    source="import",
                    created_at=_when(row.get("created_at")),
                    actor=row.get("who"),
                    targets=list(row.get("targets") or []),
                )
                for g in gates:
                    if not g.at_promote:
                        ledger.record_gate(env, str(row["id"]), g)
                previous = str(row["id"])
                item.imported += 1
    return result


def _when(value: Any) -> float:
    """Legacy rows carry ISO-8601 times, ours epoch seconds."""
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value:
        from datetime import datetime

        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return 0.0
