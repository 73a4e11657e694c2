"""A real Docker registry (Debian's docker-registry, installed by `make test`) for the tests, and a tiny
image pushed through its HTTP API. Import with: sys.path.insert(0, str(Path(__file__).parent));
from registry_fixtures import ...
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.waiting import until

REGISTRY_BIN = shutil.which("docker-registry")


@contextmanager
def run_registry(tmp: Path, addr: str, users: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """docker-registry serving `addr` (host:port), with htpasswd users (bcrypt) when given."""
    # Installed by `make test` (Makefile SYSTEM_TOOLS); absent means a broken setup, not a pass.
    assert REGISTRY_BIN is not None, "docker-registry is not installed (apt-get install docker-registry)"
    auth = ""
    if users:
        import bcrypt

        htpasswd = tmp / "htpasswd"
        htpasswd.write_text("".join(f"{u}:{bcrypt.hashpw(p.encode(), bcrypt.gensalt(4)).decode()}\n"
                                    for u, p in users.items()))
        auth = f"auth:\n  htpasswd:\n    realm: test\n    path: {htpasswd}\n"
    cfg = tmp / f"registry-{addr.replace(':', '-')}.yml"
    cfg.write_text(f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {tmp / 'store'}\n"
                   f"http:\n  addr: {addr}\n{auth}")
    with serving([REGISTRY_BIN, "serve", str(cfg)], f"http://{addr}/v2/", (200, 401)) as proc:
        yield proc


@contextmanager
def serving(argv: list[str], probe: str, ready: tuple[int, ...] = (200,), wait: float = 60
            ) -> Iterator[subprocess.Popen[bytes]]:
    """Start a server process, wait until `probe` answers one of `ready`, stop it (by its pid) after."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    def up() -> bool:
        try:
            return httpx.get(probe, timeout=1).status_code in ready
        except httpx.HTTPError:
            assert proc.poll() is None, f"{argv[0]} exited {proc.returncode} before serving"
            return False

    try:
        until(up, wait, what=f"{argv[0]} to serve {probe}")
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def push_image(host: str, name: str, auth: tuple[str, str] | None = None) -> str:
    """Push a tiny image through the registry HTTP API; returns the manifest digest."""
    base = f"http://{host}/v2/{name}"

    def blob(data: bytes) -> str:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        start = httpx.post(f"{base}/blobs/uploads/", auth=auth)
        assert start.status_code == 202, start.text
        loc = start.headers["location"]
        loc = loc if loc.startswith("http") else f"http://{host}{loc}"
        loc += ("&" if "?" in loc else "?") + f"digest={digest}"  # keep the upload's own _state query
        put = httpx.put(loc, content=data, headers={"Content-Type": "application/octet-stream"}, auth=auth)
        assert put.status_code == 201, put.text
        return digest

    config = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}
                        ).encode()
    layer = b"layer bytes"
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": blob(config),
                   "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": blob(layer),
                    "size": len(layer)}],
    }
    put = httpx.put(f"{base}/manifests/v1", content=json.dumps(manifest).encode(),
                    headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"}, auth=auth)
    assert put.status_code == 201, put.text
    return put.headers["docker-content-digest"]


VERDACCIO = Path(__file__).resolve().parent.parent / ".tools" / "npm" / "node_modules" / ".bin" / "verdaccio"


@contextmanager
def run_verdaccio(tmp: Path, port: int) -> Iterator[str]:
    """A real local npm registry (verdaccio, pinned in tests/npm-tools, installed by `make npm-tools`), no
    uplinks (never the network); yields its URL."""
    assert VERDACCIO.exists(), "verdaccio is not installed: run `make npm-tools` (make test does)"
    cfg = tmp / "verdaccio.yaml"
    cfg.write_text(f"storage: {tmp / 'npm-storage'}\nauth:\n  htpasswd:\n    file: {tmp / 'npm-htpasswd'}\n"
                   "uplinks: {}\npackages:\n  '**':\n    access: $all\n    publish: $authenticated\n"
                   "log: {type: stdout, format: pretty, level: error}\n")
    url = f"http://127.0.0.1:{port}"
    with serving([str(VERDACCIO), "--config", str(cfg), "--listen", f"127.0.0.1:{port}"], f"{url}/-/ping"):
        yield url


def npm_publish(registry: str, pkg_dir: Path, name: str, version: str) -> str:
    """Publish a tiny package with the real npm CLI; returns the integrity `npm pack` computed."""
    token = httpx.put(f"{registry}/-/user/org.couchdb.user:ci", json={"name": "ci", "password": "pw-123456"}
                      ).json().get("token")
    if not token:  # the user exists already: log in
        token = httpx.put(f"{registry}/-/user/org.couchdb.user:ci", json={"name": "ci", "password": "pw-123456"},
                          auth=("ci", "pw-123456")).json()["token"]
    pkg_dir.mkdir(parents=True, exist_ok=True)
    (pkg_dir / "package.json").write_text(json.dumps({"name": name, "version": version, "main": "index.js"}))
    (pkg_dir / "index.js").write_text(f"module.exports = {json.dumps(version)};\n")
    host = registry.removeprefix("http:")
    (pkg_dir / ".npmrc-test").write_text(f"registry={registry}/\n{host}/:_authToken={token}\n")
    packed = subprocess.run(["npm", "pack", "--json", "--dry-run", "--userconfig", ".npmrc-test"], cwd=pkg_dir,
                            capture_output=True, text=True, check=True, timeout=120)
    subprocess.run(["npm", "publish", "--userconfig", ".npmrc-test"], cwd=pkg_dir, capture_output=True,
                   text=True, check=True, timeout=120)
    return str(json.loads(packed.stdout)[0]["integrity"])


def go_module_proxy(tmp: Path, module: str, versions: list[str]) -> Path:
    """A file:// GOPROXY holding `module` at these versions (no network for `go`)."""
    at = tmp / "goproxy" / module / "@v"
    at.mkdir(parents=True)
    for version in versions:
        gomod = f"module {module}\n\ngo 1.22\n"
        (at / f"{version}.mod").write_text(gomod)
        (at / f"{version}.info").write_text(json.dumps({"Version": version, "Time": "2026-01-01T00:00:00Z"}))
        with zipfile.ZipFile(at / f"{version}.zip", "w") as z:
            z.writestr(f"{module}@{version}/go.mod", gomod)
            z.writestr(f"{module}@{version}/lib.go", "package lib\n\nfunc Parse(s string) int { return len(s) }\n")
    (at / "list").write_text("\n".join(versions) + "\n")
    return tmp / "goproxy"


@contextmanager
def run_token_registry(tmp: Path, addr: str, users: dict[str, str]) -> Iterator[str]:
    """docker-registry serving `addr` with token auth (`WWW-Authenticate: Bearer realm=...`), its storage
    `tmp/store` (push with an open `run_registry` on the same `tmp` first). The token service is a FAKE
    (the real ones, docker_auth or Harbor's, cannot run here): on 127.0.0.1, it checks Basic auth against
    `users` (anonymous gets 401) and signs an RS256 JWT with a self-signed certificate the registry trusts.
    Yields the realm URL."""
    import base64
    import datetime
    import threading
    import uuid
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlparse

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake token issuer")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    (tmp / "token-ca.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    def token(user: str, scope: str) -> str:
        header = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(cert.public_bytes(
            serialization.Encoding.DER)).decode()]}
        access = []
        if scope.startswith("repository:"):
            _, repo, actions = scope.split(":", 2)
            access.append({"type": "repository", "name": repo, "actions": actions.split(",")})
        t = int(time.time())
        claims = {"iss": "fake-issuer", "sub": user, "aud": "test-registry", "exp": t + 300, "nbf": t - 10,
                  "iat": t, "jti": uuid.uuid4().hex, "access": access}
        signing = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
        return f"{signing}.{b64(key.sign(signing.encode(), padding.PKCS1v15(), hashes.SHA256()))}"

    class Issuer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            user, _, password = base64.b64decode(
                (self.headers.get("Authorization") or "Basic ").removeprefix("Basic ")).decode().partition(":")
            if not user or users.get(user) != password:
                self.send_response(401)
                self.end_headers()
                return
            scope = (parse_qs(urlparse(self.path).query).get("scope") or [""])[0]
            body = json.dumps({"token": token(user, scope)}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Issuer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    realm = f"http://127.0.0.1:{server.server_address[1]}/token"
    cfg = tmp / f"registry-token-{addr.replace(':', '-')}.yml"
    cfg.write_text(f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {tmp / 'store'}\n"
                   f"http:\n  addr: {addr}\nauth:\n  token:\n    realm: {realm}\n    service: test-registry\n"
                   f"    issuer: fake-issuer\n    rootcertbundle: {tmp / 'token-ca.pem'}\n")
    assert REGISTRY_BIN is not None, "docker-registry is not installed (apt-get install docker-registry)"
    try:
        with serving([REGISTRY_BIN, "serve", str(cfg)], f"http://{addr}/v2/", (401,)):
            yield realm
    finally:
        server.shutdown()
        server.server_close()
