"""One GET against the Kubernetes API of a kubeconfig context, without starting kubectl
(docs/reference-cluster.md#speed: `cluster status` reads the nodes this way).

Handled: the server's CA (`certificate-authority` / `-data`, or `insecure-skip-tls-verify`), client
certificates (`client-certificate` / `client-key`, or their `-data`), bearer tokens (`token`, `tokenFile`).
Anything else a kubeconfig can say (exec plugins, auth providers, basic auth, proxies, a TLS server name) raises
`Unsupported`, and the caller asks kubectl instead. The kubeconfig files are $KUBECONFIG's (first one to name an
entry wins, as kubectl merges them) or ~/.kube/config. Inline key material is written to a private temporary
directory (0700, files 0600) only for as long as the TLS context takes to load it.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

_HANDLED_USER = {"client-certificate", "client-certificate-data", "client-key", "client-key-data", "token",
                 "tokenFile"}
_HANDLED_CLUSTER = {"server", "certificate-authority", "certificate-authority-data", "insecure-skip-tls-verify",
                    "extensions"}


class Unsupported(Exception):
    """The context needs something only kubectl does (or is not in the kubeconfig)."""


def _files() -> list[Path]:
    env = os.environ.get("KUBECONFIG", "")
    listed = [Path(p) for p in env.split(os.pathsep) if p]
    return listed or [Path.home() / ".kube" / "config"]


def _load(path: Path) -> dict[str, Any]:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise Unsupported(f"cannot read {path}: {exc}") from exc
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise Unsupported(f"{path} is not YAML: {exc}") from exc
    return doc if isinstance(doc, dict) else {}


def resolve(context: str) -> tuple[dict[str, Any], dict[str, Any], Path]:
    """The (cluster, user) entries `context` names, and the file relative paths resolve against."""
    entries: dict[str, dict[str, tuple[dict[str, Any], Path]]] = {"contexts": {}, "clusters": {}, "users": {}}
    for path in _files():
        doc = _load(path)
        for kind, table in entries.items():
            for item in doc.get(kind) or []:
                if isinstance(item, dict) and isinstance(item.get("name"), str):
                    body = item.get(kind[:-1])
                    table.setdefault(item["name"], (body if isinstance(body, dict) else {}, path))
    if context not in entries["contexts"]:
        raise Unsupported(f"no context {context!r} in the kubeconfig")
    ctx, _ = entries["contexts"][context]
    cluster, cpath = entries["clusters"].get(str(ctx.get("cluster")), ({}, Path()))
    user, _ = entries["users"].get(str(ctx.get("user")), ({}, Path()))
    if not cluster.get("server") or set(cluster) - _HANDLED_CLUSTER or set(user) - _HANDLED_USER:
        raise Unsupported(f"context {context!r} needs kubectl")
    return cluster, user, cpath


def _material(entry: dict[str, Any], key: str, base: Path, scratch: Path) -> str | None:
    """A file path for `key` (a path, relative to the kubeconfig's directory) or `key-data` (base64, written
    to the scratch directory)."""
    if entry.get(f"{key}-data"):
        target = scratch / key
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(base64.b64decode(str(entry[f"{key}-data"])))
        return str(target)
    if entry.get(key):
        return str((base.parent / str(entry[key])) if not os.path.isabs(str(entry[key])) else entry[key])
    return None


def _tls(cluster: dict[str, Any], user: dict[str, Any], base: Path) -> Any:
    import ssl
    import tempfile

    with tempfile.TemporaryDirectory(prefix="kubeapi-") as tmp:  # mode 0700
        scratch = Path(tmp)
        tls = ssl.create_default_context(cafile=_material(cluster, "certificate-authority", base, scratch))
        if cluster.get("insecure-skip-tls-verify"):
            tls.check_hostname = False
            tls.verify_mode = ssl.CERT_NONE
        cert = _material(user, "client-certificate", base, scratch)
        if cert:
            tls.load_cert_chain(cert, _material(user, "client-key", base, scratch))
    return tls


def get_json(context: str, path: str, timeout: float = 5.0) -> dict[str, Any] | None:
    """GET `path` on `context`'s API server: the JSON document, or None when the server cannot be reached or
    answers other than 200. Raises `Unsupported` when only kubectl can make the request."""
    import http.client
    import ssl
    from urllib.parse import urlsplit

    cluster, user, base = resolve(context)
    url = urlsplit(str(cluster["server"]))
    headers = {"Accept": "application/json"}
    token = user.get("token")
    if not token and user.get("tokenFile"):
        try:
            token = Path(str(user["tokenFile"])).read_text().strip()
        except OSError as exc:
            raise Unsupported(f"cannot read the token file: {exc}") from exc
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if url.scheme == "https":
        try:
            tls = _tls(cluster, user, base)
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError: key material kubectl may explain
            raise Unsupported(f"cannot load the TLS material: {exc}") from exc
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(url.hostname or "", url.port,
                                                                       timeout=timeout, context=tls)
    elif url.scheme == "http":
        conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=timeout)
    else:
        raise Unsupported(f"server scheme {url.scheme!r}")
    try:
        try:
            conn.request("GET", url.path.rstrip("/") + path, headers=headers)
            answer = conn.getresponse()
            body = answer.read()
        finally:
            conn.close()
    except (OSError, ssl.SSLError, http.client.HTTPException):
        return None
    if answer.status != 200:
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None
