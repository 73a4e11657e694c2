"""A hosted frontend's files in the release, served through the gateway (release artifacts `file`,
immutable and content-addressed; a domain bound to a workload or frontend name; frontends' `output`
static / standalone / server: docs/reference-domains.md#a-hosted-frontends-files): a real project cut and
deployed to a real control plane, a domain verified against a real authoritative DNS server, pages fetched
over TLS with the certificate verified against the exported CA."""

from __future__ import annotations

import hashlib
import http.client
import json
import shutil
import socket
import ssl
from pathlib import Path
from typing import Any

import httpx

from tests.deploy_fixtures import Demo
from tests.domain_fixtures import (  # noqa: F401
    DOMAIN_SCOPES,
    Zone,
    gateway_plane,
    gateway_ports,
    publish_claim,
    zone,
)
from tests.hosted_fixtures import (  # noqa: F401
    admin,
    commit,
    demo,
    hosted_env,
    mint_in_store,
    run_json,
    seed_org_in_store,
    with_token,
)
from tests.waiting import until
from tests.webhooks_fixtures import Server, server_factory  # noqa: F401

INDEX = "<!doctype html><html><head><script src=\"/assets/app.js\"></script></head><body>shop front</body></html>\n"
BUILD = ("mkdir -p dist/assets dist/docs && cp src/index.html dist/index.html && cp src/app.js dist/assets/app.js "
         "&& cp src/logo.svg dist/logo.svg && printf '<h1>docs</h1>' > dist/docs/index.html")


def _tls(port: int, host: str, cafile: str, path: str = "/", method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """One request over TLS to 127.0.0.1 with SNI and Host `host`, the certificate verified against
    the CA (the path is sent as given: no client-side normalization)."""
    ctx = ssl.create_default_context(cafile=cafile)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname=host)
    try:
        conn.request(method, path, headers={"Host": host})
        answer = conn.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        conn.close()


def _add_frontend(demo: Demo, frontend: str) -> None:  # noqa: F811
    path = demo.root / "deploy" / "kcl" / "cloud" / "main.k"
    path.write_text(path.read_text().rstrip().removesuffix("}").rstrip() + f"\n    frontends = [{frontend}]\n}}\n")


def _web_sources(demo: Demo) -> None:  # noqa: F811
    src = demo.root / "web" / "src"
    src.mkdir(parents=True)
    (src / "index.html").write_text(INDEX)
    (src / "app.js").write_text("document.title = 'shop';\n")
    (src / "logo.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>\n')
    (demo.root / "web" / "secret.txt").write_text("not part of the output\n")


def _live_domain(srv: Server, demo: Demo, env: dict[str, Any], zone: Zone, hostname: str,  # noqa: F811
                 target: str, tmp_path: Path, path: str = "/") -> tuple[int, str]:
    """Claim, bind and publish `hostname`; once the poller made it live: (https port, CA file)."""
    code, doc = run_json(demo, env, "domain", "add", hostname, "--env", "cloud")
    claim = doc["result"]
    code, doc = run_json(demo, env, "domain", "bind", hostname, "--env", "cloud", "--target", target)
    assert code == 0 and doc["result"]["binding"] == {"env": "cloud", "target": target}
    publish_claim(zone, claim)
    ca = tmp_path / "ca.pem"
    ca.write_bytes(httpx.get(srv.url + "/gateway/ca.pem", timeout=10).content)
    port = gateway_ports(srv)["https"]

    def served() -> bool:
        try:  # before the poller verifies the name the gateway presents no certificate for it
            return _tls(port, hostname, str(ca), path)[0] == 200
        except ssl.SSLCertVerificationError:
            return False

    until(served, timeout=30)
    return port, str(ca)


def test_static_frontend_is_served_from_its_release_over_tls(gateway_plane: Server, zone: Zone, demo: Demo,  # noqa: F811
                                                             tmp_path: Path) -> None:
    """Frontends (`output`: static, the default) and releases (file artifacts, content-addressed,
    recorded per artifact; docs/reference-domains.md#a-hosted-frontends-files): `env deploy` of a hosted
    environment runs the frontend's `build`, cuts a release carrying every file of its output directory (and
    nothing outside it) and uploads them; a live domain bound to the frontend is served by the gateway from
    those files over TLS (certificate verified against the exported CA): pages and assets with their content types, a
    directory's index.html, a client-side route falling back to index.html (a single-page app), a
    missing asset 404, no path escaping the output directory, only GET and HEAD; a frontend built under
    a base path served under it; laid out again on
    first use where the files are absent; a new release's files served once it is promoted (the old
    release's unchanged); `env smoke` PASSes its route."""
    seed_org_in_store(gateway_plane, "acme", scopes=DOMAIN_SCOPES)
    env = with_token(demo, mint_in_store(gateway_plane, "acme", DOMAIN_SCOPES))
    hosted_env(demo, gateway_plane.url)
    _web_sources(demo)
    (demo.root / "admin" / "out").mkdir(parents=True)
    (demo.root / "admin" / "out" / "index.html").write_text("<p>admin</p>")
    _add_frontend(demo, f'framework.Frontend {{name = "web", dir = "web", build = "{BUILD}", '
                        'routes = [framework.Route {host = "web.test"}]}, '
                        'framework.Frontend {name = "admin", dir = "admin", output = "out", base_path = "/admin"}')
    commit(demo, "a static frontend")
    code, doc = run_json(demo, env, "env", "deploy", "cloud", "--yes", "--timeout", "60")
    assert code == 0, (doc["error"], str(doc)[:3000])
    version = doc["target"]["release"]
    release = json.loads((demo.root / ".framework" / "releases" / f"{version}.json").read_text())
    carried = {a["coordinate"]: a["digest"] for a in release["artifacts"] if a["workload"] == "web"}
    assert set(carried) == {"web/dist/index.html", "web/dist/assets/app.js", "web/dist/logo.svg",
                            "web/dist/docs/index.html"}
    for coordinate, digest in carried.items():  # content-addressed: the digest of the built bytes
        assert digest == "sha256:" + hashlib.sha256((demo.root / coordinate).read_bytes()).hexdigest()
    assert release["images"]["web"]["coordinate"] == "files:web"

    port, ca = _live_domain(gateway_plane, demo, env, zone, "web.test", "web", tmp_path)
    status, headers, body = _tls(port, "web.test", ca)
    assert status == 200 and body.decode() == INDEX and headers["content-type"] == "text/html; charset=utf-8"
    assert headers["x-content-type-options"] == "nosniff"
    status, headers, body = _tls(port, "web.test", ca, "/assets/app.js")
    assert status == 200 and b"document.title" in body and "javascript" in headers["content-type"]
    assert _tls(port, "web.test", ca, "/logo.svg")[1]["content-type"].startswith("image/svg+xml")
    assert _tls(port, "web.test", ca, "/docs/")[2] == b"<h1>docs</h1>"  # a directory's index.html
    status, _, body = _tls(port, "web.test", ca, "/orders/42")  # a client-side route of the app
    assert status == 200 and body.decode() == INDEX
    status, headers, body = _tls(port, "web.test", ca, "/assets/missing.js")
    assert status == 404 and headers["content-type"].startswith("text/html") and b"missing.js" in body
    for escape in ("/../secret.txt", "/..%2fsecret.txt", "/assets/../../secret.txt", "/%2e%2e/secret.txt"):
        status, _, body = _tls(port, "web.test", ca, escape)
        assert status == 404 and b"not part of the output" not in body, (escape, status)
    status, headers, body = _tls(port, "web.test", ca, "/", method="HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) == len(INDEX)
    status, headers, _ = _tls(port, "web.test", ca, "/", method="POST")
    assert status == 405 and headers["allow"] == "GET, HEAD"

    laid_out = next(gateway_plane.data_dir.glob(f"hosted/releases/*/{version}/web"))
    shutil.rmtree(laid_out)  # as on a server that did not converge it: the gateway lays it out on first use
    assert _tls(port, "web.test", ca)[2].decode() == INDEX and (laid_out / ".complete").exists()

    (demo.root / "web" / "src" / "index.html").write_text(INDEX.replace("shop front", "new front"))
    commit(demo, "a new front page")
    code, doc = run_json(demo, env, "env", "deploy", "cloud", "--yes", "--timeout", "60")
    assert code == 0 and doc["target"]["release"] != version, doc
    until(lambda: b"new front" in _tls(port, "web.test", ca)[2])  # the new promotion's files
    assert (laid_out / "web" / "dist" / "index.html").read_text() == INDEX  # the old release's: untouched

    # base path: a frontend built under /admin is served under it
    admin_port, _ = _live_domain(gateway_plane, demo, env, zone, "admin.test", "admin", tmp_path, "/admin/")
    assert _tls(admin_port, "admin.test", ca, "/admin/")[2] == b"<p>admin</p>"
    assert _tls(admin_port, "admin.test", ca, "/admin")[2] == b"<p>admin</p>"
    status, headers, _ = _tls(admin_port, "admin.test", ca, "/")
    assert status == 308 and headers["location"] == "/admin/"
    assert _tls(admin_port, "admin.test", ca, "/elsewhere")[0] == 404

    code, doc = run_json(demo, env, "env", "smoke", "cloud")
    routes = {r["host"]: r for r in doc["routes"]}
    assert code == 0 and routes["web.test"]["klass"] == "PASS" and routes["web.test"]["status"] == 200, doc

    code, doc = run_json(demo, env, "env", "status", "cloud")
    status_doc = doc["environments"][0]
    web = next(w for w in status_doc["workloads"] if w["name"] == "web")
    assert web["phase"] == "ready" and web["healthy"], web  # nothing runs: the gateway serves its files
    assert status_doc["convergence"] == "converged" and status_doc["health"] == "healthy", status_doc


def test_server_frontend_runs_in_a_directory_holding_its_output(gateway_plane: Server, zone: Zone,  # noqa: F811
                                                                demo: Demo, tmp_path: Path) -> None:  # noqa: F811
    """Frontends (`output`: server) and a domain bound to a frontend
    (docs/reference-domains.md#a-hosted-frontends-files): the release carries the frontend's built output;
    the control plane runs its command on its `port` in a directory holding exactly those files, and the
    gateway proxies the live domain to it over TLS."""
    from tests.hosted_fixtures import free_port

    seed_org_in_store(gateway_plane, "acme", scopes=DOMAIN_SCOPES)
    env = with_token(demo, mint_in_store(gateway_plane, "acme", DOMAIN_SCOPES))
    hosted_env(demo, gateway_plane.url)
    built = demo.root / "web" / "build"
    built.mkdir(parents=True)
    (built / "server-page.html").write_text("<p>rendered by the frontend server</p>\n")
    (demo.root / "web" / "source-only.txt").write_text("not shipped\n")
    web = free_port()
    _add_frontend(demo, f'framework.Frontend {{name = "web", dir = "web", output = "build", output_kind = "server", '
                        f'port = {web}, dev = ["python3", "-m", "http.server", "{web}", "--bind", "127.0.0.1"]}}')
    commit(demo, "a server frontend")
    code, doc = run_json(demo, env, "env", "deploy", "cloud", "--yes", "--timeout", "60")
    assert code == 0, (doc["error"], str(doc)[:3000])
    port, ca = _live_domain(gateway_plane, demo, env, zone, "web.test", "web", tmp_path)
    status, _, listing = _tls(port, "web.test", ca)
    assert status == 200 and b"server-page.html" in listing and b"source-only" not in listing
    status, _, page = _tls(port, "web.test", ca, "/server-page.html")
    assert status == 200 and page == b"<p>rendered by the frontend server</p>\n"


def test_cut_refuses_a_missing_output_and_a_file_over_the_cap(demo: Demo) -> None:  # noqa: F811
    """A cut fails if any declared artifact is missing, and the control plane's 64 MiB artifact cap
    (docs/reference-domains.md#a-hosted-frontends-files): a hosted environment's frontend whose output
    directory does not exist is refused at the cut, by name; so is an output holding a file over 64 MiB;
    nothing is cut; a standalone / server frontend without a command and port, and a base path that is not a path
    prefix, are refused at evaluation."""
    hosted_env(demo, "http://127.0.0.1:9")
    (demo.root / "web").mkdir()
    _add_frontend(demo, 'framework.Frontend {name = "web", dir = "web"}')
    commit(demo, "a frontend not built")
    code, doc = run_json(demo, demo.env, "env", "build", "cloud", "--release", "v1.0.0")
    assert code == 1 and doc["error"]["code"] == "artifact_missing", doc
    assert "frontend web: output directory web/dist does not exist" in doc["error"]["message"]

    dist = demo.root / "web" / "dist"
    dist.mkdir()
    (dist / "index.html").write_text("ok\n")
    with (dist / "video.bin").open("wb") as f:  # sparse: 64 MiB + 1 byte without writing them
        f.truncate(64 * 1024 * 1024 + 1)
    code, doc = run_json(demo, demo.env, "env", "build", "cloud", "--release", "v1.0.0")
    assert code == 1 and doc["error"]["code"] == "artifact_too_large", doc
    assert "web/dist/video.bin is 67108865 bytes" in doc["error"]["message"]
    assert "64 MiB" in doc["error"]["message"]
    assert not (demo.root / ".framework" / "releases" / "v1.0.0.json").exists()

    (dist / "video.bin").unlink()
    code, doc = run_json(demo, demo.env, "env", "build", "cloud", "--release", "v1.0.0")
    assert code == 0, doc
    assert [a["coordinate"] for a in doc["release"]["artifacts"] if a["workload"] == "web"] == ["web/dist/index.html"]

    path = demo.root / "deploy" / "kcl" / "cloud" / "main.k"
    path.write_text(path.read_text().replace('dir = "web"}', 'dir = "web", output_kind = "server"}'))
    code, doc = run_json(demo, demo.env, "env", "build", "cloud", "--release", "v1.0.1")
    assert code == 1 and "needs `dev`" in doc["error"]["message"], doc
    path.write_text(path.read_text().replace('output_kind = "server"}', 'base_path = "shop/"}'))
    code, doc = run_json(demo, demo.env, "env", "build", "cloud", "--release", "v1.0.1")
    assert code == 1 and "base_path is a path prefix such as /shop" in doc["error"]["message"], doc


def test_upload_refuses_a_file_over_the_control_planes_cap_by_name(server_factory: Any, demo: Demo) -> None:  # noqa: F811
    """Releases stored on the control plane (docs/reference-hosted.md#releases-and-artifacts), and its 64
    MiB artifact cap: a hosted deploy whose release holds a workload file over 64 MiB is refused before any
    byte is uploaded, naming the file and its size (exit 1, never a traceback); the control plane holds no
    release afterwards."""
    from tests.hosted_fixtures import cp_get

    srv = server_factory()
    try:
        seed_org_in_store(srv, "acme")
        token = mint_in_store(srv, "acme")
        env = with_token(demo, token)
        hosted_env(demo, srv.url)
        with (demo.root / "services" / "api" / "model.bin").open("wb") as f:  # shipped with the program's directory
            f.truncate(64 * 1024 * 1024 + 1)
        commit(demo, "a large model file")
        code, doc = run_json(demo, env, "env", "deploy", "cloud", "--yes", "--timeout", "60")
        assert code == 1 and doc["error"]["code"] == "artifact_too_large", doc
        assert "services/api/model.bin (api) is 67108865 bytes" in doc["error"]["message"]
        assert "nothing was uploaded" in doc["error"]["message"]
        assert cp_get(srv, token, "/v1/releases").json()["releases"] == []
    finally:
        srv.stop()
