"""Image references and registry hosts (release artifact kind `oci`, `registry login`,
`registry ref`: docs/reference-ci.md#commands).

One parser for `[host[:port]/]repository[:tag][@digest]` as docker and oras read it: no host part means
Docker Hub (`docker.io`, `library/` for one-segment names). Plain HTTP is used for loopback hosts and
the hosts listed in FRAMEWORK_INSECURE_REGISTRIES (comma-separated).
"""

from __future__ import annotations

import base64
import os
from typing import Any, NamedTuple

DOCKER_HUB = "docker.io"
DOCKER_HUB_CONFIG_KEY = "https://index.docker.io/v1/"  # the key docker's config.json uses for Docker Hub


class ImageRef(NamedTuple):
    host: str
    repository: str
    tag: str | None
    digest: str | None

    @property
    def name(self) -> str:
        """`host/repository` as written in a workload (Docker Hub without its host)."""
        return self.repository if self.host == DOCKER_HUB else f"{self.host}/{self.repository}"

    def at(self, digest: str) -> str:
        return f"{self.name}@{digest}"


def parse_image(ref: str) -> ImageRef:
    rest, _, digest = ref.partition("@")
    first, sep, remainder = rest.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        host, path = first, remainder
    else:
        host, path = DOCKER_HUB, (rest if "/" in rest else f"library/{rest}")
    tag = None
    last = path.rsplit("/", 1)[-1]
    if ":" in last:
        path, _, tag = path.rpartition(":")
    return ImageRef(host, path, tag or None, digest or None)


def _hostname(host: str) -> str:
    if host.startswith("["):
        return host.split("]")[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_local(host: str) -> bool:
    """A registry on this machine (loopback, *.localhost): nothing to log in to."""
    name = _hostname(host)
    return name in ("localhost", "[::1]", "::1") or name.startswith("127.") or name.endswith(".localhost")


def plain_http(host: str) -> bool:
    insecure = {h.strip() for h in os.environ.get("FRAMEWORK_INSECURE_REGISTRIES", "").split(",") if h.strip()}
    return is_local(host) or host in insecure or _hostname(host) in insecure


def registry_url(host: str) -> str:
    if host == DOCKER_HUB:
        return "https://registry-1.docker.io"
    return f"{'http' if plain_http(host) else 'https'}://{host}"


def config_key(host: str) -> str:
    return DOCKER_HUB_CONFIG_KEY if host == DOCKER_HUB else host


def bearer_challenge(header: str) -> dict[str, str] | None:
    """The parameters of a `WWW-Authenticate: Bearer realm=...,service=...,scope=...` challenge."""
    if not header.lower().startswith("bearer "):
        return None
    params: dict[str, str] = {}
    for part in header[7:].split(","):
        key, sep, value = part.strip().partition("=")
        if sep:
            params[key] = value.strip('"')
    return params if "realm" in params else None


def answer_challenge(client: Any, header: str, auth: tuple[str, str] | None = None) -> str | None:
    """The `Authorization` value answering a registry's 401 `WWW-Authenticate` challenge, as docker does:
    a Bearer challenge -> a token from its realm (fetched with Basic `auth` when given, anonymously
    otherwise); a Basic challenge -> Basic `auth`. None when there is nothing to answer with."""
    params = bearer_challenge(header)
    if params:
        realm = params.pop("realm")
        resp = client.get(realm, params=params, auth=auth)
        if resp.status_code != 200:
            return None
        tok = resp.json()
        token = tok.get("token") or tok.get("access_token")
        return f"Bearer {token}" if token else None
    if auth and header.lower().startswith("basic"):
        return "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    return None
