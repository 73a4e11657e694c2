"""The one control-plane client of the framework side (the credential precedence of
engine.auth.credentials.resolve_control_plane): every `framework` command that talks to
a control plane (`env deploy` of a hosted environment, `gate`, `ledger`, `release where`, `cloud`,
`domain`) sends its requests through `ControlPlaneClient`.

Unreachable, or a credential refused: exit 2 ("could not determine"), naming the endpoint and the
credential sources tried.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.errors import EngineError
from engine.promotions.rules import PromotionConflict

if TYPE_CHECKING:
    import httpx

    from engine.environments.model import EnvironmentSpec


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

        from engine.auth.credentials import start_or_point_hint

        try:
            httpx.get(self.endpoint + "/health", timeout=5)
        except httpx.HTTPError as exc:
            raise ControlPlaneUnreachable(f"control plane unreachable at {self.endpoint}: {exc}",
                                          hint=start_or_point_hint()) from None

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

        from engine.auth.credentials import start_or_point_hint

        try:
            response = self.http.request(method, path, json=json, content=content, params=params)
        except httpx.HTTPError as exc:
            raise ControlPlaneUnreachable(
                f"control plane unreachable at {self.endpoint}: {exc} (credential from "
                f"{self.resolved.token_source})", hint=start_or_point_hint()) from None
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
