"""`release verify` (docs/reference-ci.md#commands): oci against a real registry on loopback, npm against a
real local npm registry (verdaccio) with a package published by the real npm CLI, gomod against a
checksum-database stand-in (named so: the public sum.golang.org cannot run here) serving hashes the real `go`
command computed, file always UNVERIFIABLE; outcomes and exit codes, --strict, --timeout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture, free_port  # noqa: E402,F401
from registry_fixtures import go_module_proxy, npm_publish, push_image, run_registry, run_verdaccio  # noqa: E402


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
    addr = f"127.0.0.1:{free_port()}"
    with run_registry(tmp_path, addr) as proc:
        yield addr, proc


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


def test_npm_version_and_integrity_against_a_local_npm_registry(demo, tmp_path):
    """`npm`: the version exists and its integrity equals the recorded one (VERIFIED); another integrity
    or an unpublished version FAILED (exit 1); a registry that cannot be reached UNREACHABLE (exit 2)."""
    with run_verdaccio(tmp_path, free_port()) as registry:
        integrity = npm_publish(registry, tmp_path / "pkg", "@demo/ui", "1.0.0")
        demo.env["FRAMEWORK_NPM_REGISTRY"] = registry
        write_release(demo, "ok", [{"workload": "ui", "kind": "npm", "coordinate": "@demo/ui@1.0.0",
                                    "digest": integrity}])
        code, doc = demo.json("release", "verify", "ok")
        assert code == 0 and doc["checks"][0]["outcome"] == "VERIFIED", doc
        write_release(demo, "bad", [
            {"workload": "ui", "kind": "npm", "coordinate": "@demo/ui@1.0.0", "digest": "sha512-other"},
            {"workload": "ui2", "kind": "npm", "coordinate": "@demo/ui@9.9.9", "digest": integrity}])
        code, doc = demo.json("release", "verify", "bad")
        assert code == 1 and [c["outcome"] for c in doc["checks"]] == ["FAILED", "FAILED"]
        assert "integrity differs" in doc["checks"][0]["detail"] and "does not exist" in doc["checks"][1]["detail"]
    code, doc = demo.json("release", "verify", "ok", "--timeout", "2")
    assert code == 2 and doc["checks"][0]["outcome"] == "UNREACHABLE"


class ChecksumDatabaseStandIn(BaseHTTPRequestHandler):
    """A stand-in for the public Go checksum database (sum.golang.org), which cannot run here: it answers
    `/lookup/<module>@<version>` in the database's format with hashes the real `go` command computed."""

    records: dict[str, str] = {}
    broken = False

    def do_GET(self) -> None:  # noqa: N802
        key = self.path.removeprefix("/lookup/")
        if self.broken:
            body, status = b"internal error", 500
        elif self.path.startswith("/lookup/") and key in self.records:
            body, status = self.records[key].encode(), 200
        else:
            body, status = f"not found: {key}".encode(), 404
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def go_module_sums(tmp: Path, module: str, version: str) -> tuple[str, str]:
    """A module served by a file:// GOPROXY; the real `go mod download` computes its h1: hashes."""
    proxy = go_module_proxy(tmp, module, [version])
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOPROXY": f"file://{proxy}", "GOSUMDB": "off",
           "GOMODCACHE": str(tmp / "modcache"), "GOFLAGS": "-modcacherw"}
    (tmp / "w").mkdir()
    out = subprocess.run(["go", "mod", "download", "-json", f"{module}@{version}"], cwd=tmp / "w", env=env,
                         capture_output=True, text=True, check=True, timeout=120)
    doc = json.loads(out.stdout)
    return doc["Sum"], doc["GoModSum"]


def test_gomod_against_a_checksum_database_stand_in(demo, tmp_path):
    """`gomod`: the checksum database has the version and the hash equals (VERIFIED); another hash or an
    unknown version FAILED; a database answering 500 UNREACHABLE (exit 2); --strict with a `file`
    artifact fails on UNVERIFIABLE."""
    h1, gomod_h1 = go_module_sums(tmp_path, "example.test/lib", "v1.0.0")
    ChecksumDatabaseStandIn.records = {"example.test/lib@v1.0.0": (
        f"4242\nexample.test/lib v1.0.0 {h1}\nexample.test/lib v1.0.0/go.mod {gomod_h1}\n\n"
        "go.sum database tree\n4243\nstand-in-root-hash=\n\n— stand-in signature\n")}
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChecksumDatabaseStandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    demo.env["FRAMEWORK_GOSUMDB_URL"] = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        mod = {"workload": "be", "kind": "gomod", "coordinate": "example.test/lib@v1.0.0", "digest": h1}
        write_release(demo, "ok", [mod, {"workload": "cfg", "kind": "file", "coordinate": "a.txt",
                                         "digest": "sha256:" + "1" * 64}])
        code, doc = demo.json("release", "verify", "ok")
        assert code == 0 and [c["outcome"] for c in doc["checks"]] == ["VERIFIED", "UNVERIFIABLE"], doc
        code, doc = demo.json("release", "verify", "ok", "--strict")
        assert code == 1 and doc["strict"] is True
        write_release(demo, "bad", [{**mod, "digest": gomod_h1},
                                    {**mod, "coordinate": "example.test/lib@v9.9.9"}])
        code, doc = demo.json("release", "verify", "bad")
        assert code == 1 and [c["outcome"] for c in doc["checks"]] == ["FAILED", "FAILED"]
        assert "hash differs" in doc["checks"][0]["detail"]
        ChecksumDatabaseStandIn.broken = True
        code, doc = demo.json("release", "verify", "ok")
        assert code == 2 and doc["checks"][0]["outcome"] == "UNREACHABLE"
    finally:
        ChecksumDatabaseStandIn.broken = False
        server.shutdown()
        server.server_close()
