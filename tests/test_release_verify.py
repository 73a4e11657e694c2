"""`release verify` (spec 2): oci against a real registry on loopback, npm/gomod over their public
protocols (served by named fakes on loopback), file always UNVERIFIABLE, and the exit codes."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture, free_port  # noqa: E402,F401

REGISTRY_BIN = shutil.which("docker-registry")


def write_release(demo, version: str, artifacts: list[dict]) -> None:
    doc = {
        "version": version,
        "project": "demo",
        "created_at": time.time(),
        "provenance": {"tree": None, "commit": None, "branch": None, "dirty": False},
        "artifacts": artifacts,
        "images": {},
    }
    path = demo.root / ".framework" / "releases" / f"{version}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def test_file_artifacts_are_unverifiable_and_strict_fails(demo):
    """`file` is always UNVERIFIABLE: exit 0, or exit 1 with --strict."""
    demo.run("env", "build", "dev", "--release", "v1", check=True)
    code, doc = demo.json("release", "verify", "v1")
    assert code == 0 and {c["outcome"] for c in doc["checks"]} == {"UNVERIFIABLE"}
    code, doc = demo.json("release", "verify", "v1", "--strict")
    assert code == 1
    code, doc = demo.json("release", "verify", "nope")
    assert code == 1 and doc["error"]["code"] == "release_not_found"


@pytest.fixture(name="registry")
def registry_fixture(tmp_path):
    """A real Docker registry (Debian's docker-registry) on 127.0.0.1 with a free port."""
    # Installed by `make test` (Makefile SYSTEM_TOOLS); absent means a broken setup, not a pass.
    assert REGISTRY_BIN is not None, "docker-registry is not installed (apt-get install docker-registry)"
    port = free_port()
    cfg = tmp_path / "registry.yml"
    cfg.write_text(
        f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {tmp_path / 'store'}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )
    proc = subprocess.Popen(
        [REGISTRY_BIN, "serve", str(cfg)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{base}/v2/", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "registry did not start"
        time.sleep(0.05)
    try:
        yield f"127.0.0.1:{port}", proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def push_image(host: str, name: str) -> str:
    """Push a tiny image through the registry HTTP API; returns the manifest digest."""
    base = f"http://{host}/v2/{name}"

    def blob(data: bytes) -> str:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        start = httpx.post(f"{base}/blobs/uploads/")
        assert start.status_code == 202, start.text
        loc = start.headers["location"]
        loc = loc if loc.startswith("http") else f"http://{host}{loc}"
        loc += ("&" if "?" in loc else "?") + f"digest={digest}"  # keep the upload's own _state query
        put = httpx.put(loc, content=data, headers={"Content-Type": "application/octet-stream"})
        assert put.status_code == 201, put.text
        return digest

    config = json.dumps(
        {"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}
    ).encode()
    layer = b"layer bytes"
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": blob(config),
            "size": len(config),
        },
        "layers": [
            {"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": blob(layer), "size": len(layer)}
        ],
    }
    body = json.dumps(manifest).encode()
    put = httpx.put(
        f"{base}/manifests/v1",
        content=body,
        headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"},
    )
    assert put.status_code == 201, put.text
    return put.headers["docker-content-digest"]


def test_oci_manifest_checked_against_a_real_registry(demo, registry):
    """`oci`: the manifest exists at the digest (VERIFIED), a missing one FAILED (exit 1), a registry that
    cannot be reached UNREACHABLE (exit 2)."""
    host, proc = registry
    digest = push_image(host, "demo/api")
    write_release(
        demo, "r1", [{"workload": "api", "kind": "oci", "coordinate": f"{host}/demo/api", "digest": digest}]
    )
    code, doc = demo.json("release", "verify", "r1")
    assert code == 0 and doc["checks"][0]["outcome"] == "VERIFIED", doc
    write_release(
        demo,
        "r2",
        [
            {
                "workload": "api",
                "kind": "oci",
                "coordinate": f"{host}/demo/api",
                "digest": "sha256:" + "0" * 64,
            }
        ],
    )
    code, doc = demo.json("release", "verify", "r2")
    assert code == 1 and doc["checks"][0]["outcome"] == "FAILED"
    proc.terminate()
    proc.wait(timeout=10)
    code, doc = demo.json("release", "verify", "r1", "--timeout", "2")
    assert code == 2 and doc["checks"][0]["outcome"] == "UNREACHABLE"


class FakePackageServers(BaseHTTPRequestHandler):
    """FakeNpmRegistry + FakeSumDb: the public npm registry and Go checksum database protocols."""

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/left-pad/1.3.0":
            body, status = (
                json.dumps(
                    {"name": "left-pad", "version": "1.3.0", "dist": {"integrity": "sha512-good"}}
                ).encode(),
                200,
            )
        elif self.path == "/lookup/example.test/mod@v1.0.0":
            body, status = (
                (b"123\nexample.test/mod v1.0.0 h1:goodhash=\nexample.test/mod v1.0.0/go.mod h1:x=\n"),
                200,
            )
        else:
            body, status = b"not found", 404
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_npm_and_gomod_use_their_public_protocols_with_configurable_base_urls(demo):
    """`npm`: version exists and integrity equals recorded; `gomod`: checksum database has the version and
    the hash equals. Base URLs come from FRAMEWORK_NPM_REGISTRY / FRAMEWORK_GOSUMDB_URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakePackageServers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    demo.env.update(FRAMEWORK_NPM_REGISTRY=base, FRAMEWORK_GOSUMDB_URL=base)
    try:
        write_release(
            demo,
            "ok",
            [
                {"workload": "fe", "kind": "npm", "coordinate": "left-pad@1.3.0", "digest": "sha512-good"},
                {
                    "workload": "be",
                    "kind": "gomod",
                    "coordinate": "example.test/mod@v1.0.0",
                    "digest": "h1:goodhash=",
                },
            ],
        )
        code, doc = demo.json("release", "verify", "ok")
        assert code == 0 and [c["outcome"] for c in doc["checks"]] == ["VERIFIED", "VERIFIED"], doc
        write_release(
            demo,
            "bad",
            [
                {"workload": "fe", "kind": "npm", "coordinate": "left-pad@1.3.0", "digest": "sha512-other"},
                {
                    "workload": "be",
                    "kind": "gomod",
                    "coordinate": "example.test/mod@v9.9.9",
                    "digest": "h1:x=",
                },
            ],
        )
        code, doc = demo.json("release", "verify", "bad")
        assert code == 1 and [c["outcome"] for c in doc["checks"]] == ["FAILED", "FAILED"]
    finally:
        server.shutdown()
        server.server_close()
