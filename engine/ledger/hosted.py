"""`HostedLedger`, the hosted ledger seen from this machine: the methods of the promotion ledger
(engine.ledger.protocol.PromotionLedger, as the machine ledger engine.ledger.store.Ledger), each one
request to the control plane through engine.cloud.client, so `env deploy`, `gate`, `ledger` and
`release where` run the same stages on either (the rules themselves run on the control plane:
engine.promotions.rules).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from engine.cloud.client import ControlPlaneClient
from engine.errors import EngineError
from engine.progress import Reporter, tracked
from engine.promotions.rules import Gate, Promotion

if TYPE_CHECKING:
    from engine.environments.model import EnvironmentSpec
    from engine.releases.store import Release


class HostedLedger:
    """The hosted ledger, through the control plane (the promotion ledger location is the
    control plane when the environment's KCL declares framework.ControlPlane)."""

    def __init__(self, client: ControlPlaneClient, env: str = "") -> None:
        self.client = client
        self.env = env  # the environment this ledger was opened for (get/gates by promotion id)
        self.project = client.endpoint
        self.path = client.endpoint
        self.last_apply_seq = 0
        self.bundle: list[dict[str, Any]] = []  # the workloads a promotion runs (from the spec, at open)
        self.queued: dict[str, Any] | None = None  # set when a promotion is accepted but waits on billing

    @classmethod
    def open(cls, env: str, spec: EnvironmentSpec, token: str | None = None) -> HostedLedger:
        ledger = cls(ControlPlaneClient.for_spec(env, spec, token), env)
        ledger.bundle = bundle_of(spec)  # sent with a promotion only (env deploy)
        return ledger

    @property
    def hosted(self) -> HostedLedger:
        return self

    @property
    def machine(self) -> None:
        return None

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> HostedLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _env(self, env: str) -> str:
        return f"/v1/envs/{quote(env, safe='')}"

    def ledger_doc(self, env: str, limit: int = 20, before: int | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"limit": limit}
        if before is not None:
            params["before"] = before
        doc: dict[str, Any] = self.client.request("GET", self._env(env) + "/ledger", params=params)
        return doc

    def current(self, env: str) -> Promotion | None:
        cur = self.ledger_doc(env, limit=1)["current"]
        return Promotion.model_validate(cur) if cur else None

    def current_id(self, env: str) -> str | None:
        found: str | None = self.ledger_doc(env, limit=1)["current_id"]
        return found

    def history(self, env: str, limit: int = 20, before: int | None = None) -> list[Promotion]:
        return [Promotion.model_validate(p) for p in self.ledger_doc(env, limit, before)["promotions"]]

    def applies(self, env: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        return list(self.ledger_doc(env, limit)["applies"]) if env else []

    def list_sessions(self, env: str | None = None) -> list[Any]:
        return []  # local sessions are presence rows of the machine ledger only

    def get(self, promotion_id: str) -> Promotion | None:
        return next((p for p in self.history(self.env, limit=200) if p.id == promotion_id), None)

    def gates(self, promotion_id: str) -> list[Gate]:
        found = self.get(promotion_id)
        return found.gates if found else []

    def record_gate(self, env: str, promotion_id: str, gate: Gate) -> bool:
        doc = self.client.request("POST", self._env(env) + "/gates",
                                  json={"promotion_id": promotion_id, "gates": [gate.model_dump(mode="json")]})
        return bool(doc["added"][0])

    def append_promotion(self, env: str, release: str, images: dict[str, dict[str, Any]], *, direction: str,
                         expected_current: str | None, plan_digest: str | None = None, supersede: bool = False,
                         gates: list[Gate] | None = None, open_apply: bool = False, **_: Any) -> Promotion:
        """Compare-and-set on the control plane: PromotionConflict (exit 3) when the environment moved."""
        from engine.ci_environment import current_run_id

        doc = self.client.request("POST", self._env(env) + "/promotions", json={
            "release": release, "images": images, "direction": direction, "expected_current": expected_current,
            "plan_digest": plan_digest, "supersede": supersede, "bundle": self.bundle, "run_id": current_run_id(),
            "gates": [g.model_dump(mode="json") for g in gates or []]})
        self.queued = doc.get("queued")
        return Promotion.model_validate(doc["promotion"])

    def start_apply(self, env: str, promotion_id: str | None, release: str, *, supersede: bool = False) -> int:
        """Rule 3 on a hosted environment: nothing to open here; the control plane converges it."""
        return 0

    def bound_envs(self, release: str) -> list[Promotion]:
        doc = self.client.request("GET", f"/v1/releases/{quote(release, safe='')}/where")
        return [Promotion.model_validate(p) for p in doc["bound"]]

    def release_doc(self, version: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self.client.request("GET", f"/v1/releases/{quote(version, safe='')}",
                                                           missing_ok=True)
        return found

    def status(self, envs: list[str]) -> list[dict[str, Any]]:
        """Many environments in one round trip."""
        return list(self.client.request("GET", "/v1/status", params=[("env", e) for e in envs])["environments"])

    def upload_release(self, release: Release, report: Reporter | None = None) -> None:
        """The manifest after its file artifacts (only those the control plane lacks), content-addressed;
        `report` hears each upload (engine/progress.py)."""
        from engine.errors import ArtifactTooLarge
        from engine.releases.store import MAX_FILE_ARTIFACT, cas_path

        files = sorted({a.digest for a in release.artifacts if a.kind == "file"})
        for art in release.artifacts:  # the control plane's cap, named here before any byte is sent
            stored = cas_path(art.digest)
            size = stored.stat().st_size if art.kind == "file" and stored.is_file() else 0
            if size > MAX_FILE_ARTIFACT:
                raise ArtifactTooLarge(
                    f"release {release.version}: {art.coordinate} ({art.workload}) is {size} bytes; the control plane "
                    f"stores a file artifact of at most 64 MiB ({MAX_FILE_ARTIFACT} bytes); nothing was uploaded",
                    hint="split or compress it, or serve it from elsewhere")
        missing = self.client.request("POST", "/v1/blobs/missing", json={"digests": files})["missing"]
        named = {a.digest: a.coordinate for a in release.artifacts}
        for digest in tracked(report, "upload", missing, lambda d: named.get(d, d)):
            path = cas_path(digest)
            try:
                data = Path(path).read_bytes()
            except OSError as exc:
                raise EngineError(f"release {release.version}: artifact {digest} is not in this machine's file "
                                  f"store ({exc.strerror})", code="artifact_missing") from None
            self.client.request("PUT", f"/v1/blobs/{digest}", content=data)
        self.client.request("POST", "/v1/releases", json={"release": release.model_dump(mode="json")})

    def lifecycle(self, env: str, verb: str, targets: list[str]) -> dict[str, Any]:
        if verb == "delete":
            doc: dict[str, Any] = self.client.request("DELETE", self._env(env))
        else:
            doc = self.client.request("POST", self._env(env) + f"/{verb}", json={"targets": targets})
        return doc


def bundle_of(spec: EnvironmentSpec) -> list[dict[str, Any]]:
    """What the control plane runs per workload (the release brings the files), and per frontend
    (the release brings its built `output`, under `root`): a `static` one is served by the gateway
    from those files; a `standalone` / `server` one runs its `dev` command on its `port` in a
    directory holding them, supervised like a workload."""
    workloads = [{"name": w.name, "run": list(w.run or []), "env": dict(w.env), "ports": [p.port for p in w.ports],
                  "replicas": w.replicas, "health": w.health_spec()} for w in spec.workloads]
    frontends: list[dict[str, Any]] = []
    for f in spec.frontends:
        entry: dict[str, Any] = {"name": f.name, "kind": "frontend", "output": f.output_kind, "root": f.output_path,
                                 "base_path": f.base_path or "", "run": [], "env": {}, "ports": [], "replicas": 0,
                                 "health": None}
        if f.output_kind != "static":
            entry.update(run=list(f.dev or []), ports=[f.port], replicas=1,  # the runtime sets PORT
                         health={"type": "http", "path": "/"})
        frontends.append(entry)
    return workloads + frontends
