"""The one control-plane client of the framework side (the credential
precedence of engine.auth.credentials.resolve_control_plane) and `HostedLedger`, the hosted ledger
seen from this machine: the same methods as the machine ledger (engine.ledger.store.Ledger), each
one request to the control plane, so `env deploy`, `gate`, `ledger` and `release where` run the same
stages on either (the rules themselves run on the control plane: engine.promotions.rules).

Unreachable, or a credential refused: exit 2 ("could not determine"), naming the endpoint and the
credential sources tried.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from pydantic import BaseModel

from engine.errors import EngineError
from engine.promotions.rules import Gate, Promotion, PromotionConflict

if TYPE_CHECKING:
    import httpx

    from engine.environments.model import EnvironmentSpec
    from engine.ledger.store import Ledger
    from engine.project import Project
    from engine.releases.store import Release


class ControlPlaneUnreachable(EngineError):
    exit_code = 2
    code = "control_plane_unreachable"


class CredentialRefused(EngineError):
    exit_code = 2
    code = "credential_refused"


def _tried(token_env: str, endpoint: str) -> str:
    return (f"tried: --token, ${token_env}, the credentials-file entry for {endpoint}, "
            "$FRAMEWORK_CREDENTIAL_HELPER")


class ControlPlaneClient:
    """Requests to one control plane with one resolved credential (one HTTP connection, kept alive)."""

    def __init__(self, endpoint: str, token_env: str, token: str | None = None) -> None:
        import httpx

        from engine.auth.credentials import resolve_control_plane

        self.endpoint = endpoint.rstrip("/")
        self.token_env = token_env
        self.resolved = resolve_control_plane(self.endpoint, token_flag=token, token_env=token_env, declared=True)
        if not self.resolved.token:
            self._probe()  # unreachable is the more fundamental answer: say that first
            what = "the stored login has expired" if self.resolved.expired_login else "no credential"
            raise CredentialRefused(f"{what} for the control plane {self.endpoint} "
                                    f"({_tried(token_env, self.endpoint)})",
                                    hint=f"framework login --endpoint {self.endpoint}, or set ${token_env}")
        self.http = httpx.Client(base_url=self.endpoint, timeout=30,
                                 headers={"Authorization": f"Bearer {self.resolved.token}"})

    def _probe(self) -> None:
        import httpx

        try:
            httpx.get(self.endpoint + "/health", timeout=5)
        except httpx.HTTPError as exc:
            raise ControlPlaneUnreachable(f"control plane unreachable at {self.endpoint}: {exc}",
                                          hint="check that the control plane runs, then retry") from None

    @classmethod
    def for_spec(cls, env: str, spec: EnvironmentSpec, token: str | None = None) -> ControlPlaneClient:
        """The declared endpoint; none: the default hosted service (as `framework login` uses)."""
        from engine.auth.credentials import CONTROL_PLANE_TOKEN_ENV, DEFAULT_CONTROL_PLANE

        cp = spec.control_plane
        endpoint = (cp.endpoint if cp else None) or DEFAULT_CONTROL_PLANE
        return cls(endpoint, cp.token_env if cp else CONTROL_PLANE_TOKEN_ENV, token)

    def close(self) -> None:
        self.http.close()

    def request(self, method: str, path: str, *, json: Any = None, content: bytes | None = None,
                params: Any = None, missing_ok: bool = False) -> Any:
        import httpx

        try:
            response = self.http.request(method, path, json=json, content=content, params=params)
        except httpx.HTTPError as exc:
            raise ControlPlaneUnreachable(
                f"control plane unreachable at {self.endpoint}: {exc} (credential from "
                f"{self.resolved.token_source})", hint="check that the control plane runs, then retry") from None
        return self._answer(response, missing_ok)

    def _answer(self, response: httpx.Response, missing_ok: bool) -> Any:
        try:
            doc = response.json()
        except ValueError:
            doc = {}
        if response.status_code == 200:
            return doc
        if response.status_code == 404 and missing_ok:
            return None
        err = doc.get("error") if isinstance(doc, dict) else None
        err = err if isinstance(err, dict) else {}
        message = str(err.get("message") or f"control plane answered {response.status_code}")
        if response.status_code == 401:
            raise CredentialRefused(
                f"{self.endpoint} refused the credential from {self.resolved.token_source} (invalid, expired, "
                f"revoked, or for another control plane); {_tried(self.token_env, self.endpoint)}",
                hint=f"framework login --endpoint {self.endpoint}")
        if response.status_code == 403:
            raise EngineError(f"{self.endpoint}: {message} (credential from {self.resolved.token_source})",
                              code=str(err.get("code") or "forbidden"), exit_code=1,
                              hint="ask an organization admin for a token with that scope")
        code = str(err.get("code") or "control_plane_error")
        if code == "promotion_conflict":
            raise PromotionConflict(message, hint=err.get("hint"))
        exit_code = doc.get("exit_code") if isinstance(doc, dict) else None
        raise EngineError(message, hint=err.get("hint"), code=code,
                          exit_code=int(exit_code) if isinstance(exit_code, int) and exit_code else 1)


class HostedLedger:
    """The hosted ledger, through the control plane (the promotion ledger location is the
    control plane when the environment's KCL declares framework.ControlPlane)."""

    def __init__(self, client: ControlPlaneClient, env: str = "") -> None:
        self.client = client
        self.env = env  # the environment this ledger was opened for (get/gates by promotion id)
        self.project = client.endpoint
        self.path = client.endpoint
        self.last_apply_seq = 0
        self.bundle: list[dict[str, Any]] = []  # the workloads a promotion runs (set by the deploy)
        self.queued: dict[str, Any] | None = None  # set when a promotion is accepted but waits on billing

    @classmethod
    def open(cls, env: str, spec: EnvironmentSpec, token: str | None = None) -> HostedLedger:
        return cls(ControlPlaneClient.for_spec(env, spec, token), env)

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

    def releases(self) -> list[dict[str, Any]]:
        return list(self.client.request("GET", "/v1/releases")["releases"])

    def status(self, envs: list[str]) -> list[dict[str, Any]]:
        """Many environments in one round trip."""
        return list(self.client.request("GET", "/v1/status", params=[("env", e) for e in envs])["environments"])

    def upload_release(self, release: Release) -> None:
        """The manifest after its file artifacts (only those the control plane lacks), content-addressed."""
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
        for digest in missing:
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


def open_ledger(project: Project, env: str, spec: EnvironmentSpec | None = None) -> Ledger | HostedLedger:
    """The ledger that holds `env`'s promotions (the promotion ledger location): the control plane
    when its KCL declares framework.ControlPlane (or it is hosted), else the machine ledger."""
    from engine.environments.evaluate import evaluate_environment
    from engine.ledger.store import Ledger

    spec = spec or evaluate_environment(project, env)
    if spec.on_control_plane:
        return HostedLedger.open(env, spec)
    return Ledger.open(project.key)


class CloudReleases(BaseModel):
    env: str
    endpoint: str
    releases: list[dict[str, Any]]


def cloud_releases(project: Project, env: str, token: str | None = None) -> CloudReleases:
    """`framework cloud releases <env>`: the caller's organization's releases on the environment's
    control plane (the organization is the credential's; the request names none)."""
    from engine.environments.evaluate import evaluate_environment
    from engine.errors import UsageError

    spec = evaluate_environment(project, env)
    if not spec.on_control_plane:
        raise UsageError(f"environment {env!r} declares no framework.ControlPlane; its releases are "
                         "this checkout's", hint="framework release list")
    with HostedLedger.open(env, spec, token) as ledger:
        return CloudReleases(env=env, endpoint=ledger.client.endpoint, releases=ledger.releases())
