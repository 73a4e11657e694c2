"""`framework domain add|ls|show|verify|bind|unbind|rm` (docs/reference-domains.md#commands): requests to the
control plane `--env` picks (the environment's declared framework.ControlPlane; no `--env`: the
default hosted service, as `framework login` uses), with the credential precedence of
engine.cloud.client.ControlPlaneClient. The domain is the organization's, not the environment's;
`bind --target` binds it to that environment's workload or frontend."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel

from engine.errors import EngineError, InvalidInput
from engine.project import Project

Verb = Literal["add", "ls", "show", "verify", "bind", "unbind", "rm"]


class DomainResult(BaseModel):
    verb: str
    endpoint: str
    env: str | None = None
    result: dict[str, Any]


def _client(env: str | None, token: str | None, project: Project | None) -> Any:
    from engine.cloud.client import ControlPlaneClient

    if env is None:
        from engine.auth.credentials import CONTROL_PLANE_TOKEN_ENV, DEFAULT_CONTROL_PLANE

        return ControlPlaneClient(DEFAULT_CONTROL_PLANE, CONTROL_PLANE_TOKEN_ENV, token)
    from engine.environments.evaluate import evaluate_environment
    from engine.project import find_project

    spec = evaluate_environment(project or find_project(), env)
    if not spec.on_control_plane:
        raise InvalidInput(f"environment {env!r} declares no framework.ControlPlane; domains are hosted",
                           hint="pick a hosted environment with --env")
    return ControlPlaneClient.for_spec(env, spec, token)


def domain(verb: Verb, hostname: str | None = None, *, env: str | None = None, token: str | None = None,
           target: str | None = None, redirect_to: str | None = None,
           project: Project | None = None) -> tuple[DomainResult, int]:
    """One domain command; `project` is the checkout whose `--env` to read (default: the current one)."""
    if verb == "bind":
        if bool(target) == bool(redirect_to):
            raise InvalidInput("bind takes one of --target <workload or frontend> or --redirect-to <hostname>")
        if target and not env:
            raise InvalidInput("--target binds a workload of an environment: name it with --env <env>")
    client = _client(env, token, project)
    try:
        path = f"/v1/domains/{quote(hostname or '', safe='')}"
        if verb == "ls":
            result = client.request("GET", "/v1/domains")
        elif verb == "add":
            result = client.request("POST", "/v1/domains", json={"hostname": hostname})
        elif verb == "show":
            result = client.request("GET", path)
        elif verb == "verify":
            result = client.request("POST", path + "/verify", json={})
        elif verb == "bind":
            result = client.request("POST", path + "/binding",
                                    json={"env": env, "target": target, "redirect_to": redirect_to})
        elif verb == "unbind":
            result = client.request("DELETE", path + "/binding")
        else:
            result = client.request("DELETE", path)
    finally:
        client.close()
    if not _shaped(verb, result):
        raise EngineError(f"{client.endpoint} answered, but not as a control plane does (no domain document)",
                          code="unexpected_answer", exit_code=2,
                          hint="another service may listen at that address: point --env at a hosted environment "
                               "(its framework.ControlPlane endpoint), or start `platform server`")
    return DomainResult(verb=verb, endpoint=client.endpoint, env=env, result=result), 0


def _shaped(verb: Verb, result: Any) -> bool:
    """The answer has what the command prints: a list of domains, or one domain (its name and state)."""
    def one(d: Any) -> bool:
        return isinstance(d, dict) and isinstance(d.get("hostname"), str) and isinstance(d.get("state"), str)

    if not isinstance(result, dict):
        return False
    if verb == "ls":
        rows = result.get("domains")
        return isinstance(rows, list) and all(one(d) and isinstance(d.get("serving"), bool) for d in rows)
    return isinstance(result.get("hostname"), str) if verb == "rm" else one(result)


def control_plane_envs(project: Project) -> list[str]:
    """The environments whose control plane holds domains (hosted, or declaring framework.ControlPlane),
    in name order; one that does not evaluate is left out (`env list` names its error)."""
    from engine.environments.evaluate import evaluate_environment
    from engine.environments.files import declared_names
    from engine.errors import EngineError

    names = []
    for name in sorted(declared_names(project)):
        try:
            if evaluate_environment(project, name).on_control_plane:
                names.append(name)
        except EngineError:
            continue
    return names
