"""`registry login <env>`: log in to every registry host the environment's workload images name.

- the platform registry (`framework.ControlPlane.registry_host`) with the control-plane credential
  (credential precedence: the declared token variable, the credentials file, the helper); user `framework`;
- any other host with `--username` and `--password-stdin` or `--password-env <VAR>`;
- local registries (loopback, `*.localhost`) are skipped.
Each credential is checked against the registry first (`GET /v2/`, following a Bearer challenge as
docker does), then all are stored in one write where docker and oras look:
`$DOCKER_CONFIG/config.json` (default `~/.docker/config.json`), `auths.<host>.auth`, mode 0600.
A host refused or unreachable stores nothing at all.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.errors import EngineError, InvalidInput, UsageError
from engine.paths import atomic_write_bytes
from engine.project import Project
from engine.releases.images import answer_challenge, config_key, is_local, parse_image, registry_url

PLATFORM_USER = "framework"


class RegistryRefused(EngineError):
    code = "registry_login_refused"


class RegistryUnreachable(EngineError):
    exit_code = 2
    code = "registry_unreachable"


class HostLogin(BaseModel):
    host: str
    status: str  # logged_in | skipped_local
    credential: str | None = None  # control-plane | flags  (never the secret)
    user: str | None = None
    images: list[str]


class LoginResult(BaseModel):
    env: str
    config: str
    hosts: list[HostLogin]


def docker_config_path() -> Path:
    base = os.environ.get("DOCKER_CONFIG")
    return (Path(base) if base else Path.home() / ".docker") / "config.json"


def _read_config(path: Path) -> dict[str, Any]:
    """docker's config.json as a dict ({} when absent); unreadable or not an object -> EngineError."""
    try:
        doc = json.loads(path.read_bytes()) if path.exists() else {}
    except (OSError, ValueError) as exc:
        raise EngineError(f"{path} is unreadable: {exc}", code="docker_config_unreadable",
                          hint="fix or move the file; it was not changed") from exc
    if not isinstance(doc, dict):
        raise EngineError(f"{path} is not a JSON object; it was not changed", code="docker_config_unreadable")
    return doc


def stored_credential(host: str) -> tuple[str, str] | None:
    """(user, password) stored for registry `host` in docker's config.json (`auths.<host>.auth`, as
    `registry login` and `docker login` write it), or None. The secret is returned, never logged."""
    entry = ((_read_config(docker_config_path()).get("auths") or {}).get(config_key(host))) or {}
    try:
        user, sep, password = base64.b64decode(entry.get("auth") or "", validate=True).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return (user, password) if sep and user else None


def _check(host: str, user: str, password: str, timeout: float) -> None:
    """What `docker login` does before storing: the registry must accept the credential."""
    import httpx

    auth = (user, password)
    try:
        with httpx.Client(timeout=timeout, follow_redirects=True) as client:
            resp = client.get(f"{registry_url(host)}/v2/", auth=auth)
            authorization = (answer_challenge(client, resp.headers.get("www-authenticate", ""), auth)
                             if resp.status_code == 401 else None)
            if authorization:
                resp = client.get(f"{registry_url(host)}/v2/", headers={"Authorization": authorization})
    except httpx.HTTPError as exc:
        raise RegistryUnreachable(f"registry {host} unreachable: {exc or type(exc).__name__}",
                                  hint="nothing was stored; check the host and the network") from exc
    if resp.status_code in (401, 403):
        raise RegistryRefused(f"registry {host} refused the credential of user {user!r} ({resp.status_code})",
                              hint="nothing was stored; check --username and the password")
    if resp.status_code >= 400:
        raise RegistryUnreachable(f"registry {host} answered {resp.status_code}", hint="nothing was stored")


def _password(password_stdin: bool, password_env: str | None, stdin: Any) -> str | None:
    if password_stdin and password_env:
        raise UsageError("--password-stdin and --password-env are exclusive")
    if password_stdin:
        value = stdin.read().rstrip("\r\n")
        if not value:
            raise InvalidInput("--password-stdin: stdin held no password")
        return str(value)
    if password_env:
        value = os.environ.get(password_env)
        if not value:
            raise InvalidInput(f"--password-env {password_env}: the variable is not set or empty")
        return value
    return None


def _store(path: Path, entries: dict[str, str]) -> None:
    """Merge `auths` entries into docker's config.json (other keys kept), one atomic write, 0600."""
    doc = _read_config(path)
    auths = doc.setdefault("auths", {})
    for key, auth in entries.items():
        auths[key] = {**(auths.get(key) or {}), "auth": auth}
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(doc, indent="\t") + "\n").encode(), mode=0o600)
    os.chmod(path, 0o600)


def registry_login(project: Project, env: str, *, username: str | None = None, password_stdin: bool = False,
                   password_env: str | None = None, timeout: float = 15.0, stdin: Any = None
                   ) -> tuple[LoginResult, int]:
    import sys

    from engine.environments.evaluate import evaluate_environment

    spec = evaluate_environment(project, env)
    password = _password(password_stdin, password_env, stdin or sys.stdin)
    by_host: dict[str, list[str]] = {}
    for w in spec.workloads:
        if w.image:
            by_host.setdefault(parse_image(w.image).host, []).append(w.image)
    if not by_host:
        raise InvalidInput(f"environment {env!r} names no workload image: no registry to log in to")
    platform = spec.control_plane.registry_host if spec.control_plane else None
    hosts: list[HostLogin] = []
    logins: dict[str, tuple[str, str]] = {}
    missing = []
    for host, images in sorted(by_host.items()):
        if is_local(host):
            hosts.append(HostLogin(host=host, status="skipped_local", images=images))
            continue
        if platform and host == platform:
            token = _control_plane_token(spec)
            logins[host] = (PLATFORM_USER, token)
            hosts.append(HostLogin(host=host, status="logged_in", credential="control-plane",
                                   user=PLATFORM_USER, images=images))
        elif username and password:
            logins[host] = (username, password)
            hosts.append(HostLogin(host=host, status="logged_in", credential="flags", user=username, images=images))
        else:
            missing.append(host)
    if missing:
        raise UsageError(f"no credential for {', '.join(missing)}: pass --username with --password-stdin or "
                         "--password-env <VAR>", hint="nothing was stored")
    for host, (user, secret) in logins.items():
        _check(host, user, secret, timeout)
    path = docker_config_path()
    if logins:
        _store(path, {config_key(h): base64.b64encode(f"{u}:{p}".encode()).decode() for h, (u, p) in logins.items()})
    return LoginResult(env=env, config=str(path), hosts=hosts), 0


def _control_plane_token(spec: Any) -> str:
    from engine.auth.credentials import resolve_control_plane

    cp = spec.control_plane
    return resolve_control_plane(cp.endpoint, token_env=cp.token_env, declared=True).require("framework")
