"""A local vulnerability database for the `ci vuln-scan` tests: never the network.

- `OsvDatabase`: a directory of OSV-format entries the test writes (PyPI, npm, Go ecosystems).
- `govulndb(...)`: the same Go entries laid out as a Go vulnerability database (index/db.json,
  index/modules.json, index/vulns.json, ID/<id>.json) for `govulncheck -db file://...`.
- `OsvServiceStandIn`: a local stand-in (named so) for the OSV API (`POST /v1/query`) and for the npm
  registry's bulk advisory endpoint (`POST /-/npm/v1/security/advisories/bulk`), answering from the
  directory. pip-audit's OSV URL is fixed (https://api.osv.dev), so the stand-in also accepts HTTPS
  CONNECT (HTTPS_PROXY) and terminates TLS with a certificate for api.osv.dev signed by a CA the test
  makes with the openssl CLI (REQUESTS_CA_BUNDLE): pip-audit runs unmodified and stays on this machine.
"""

from __future__ import annotations

import gzip
import json
import socketserver
import ssl
import subprocess
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version


def osv_entry(vid: str, ecosystem: str, package: str, fixed: str, summary: str, introduced: str = "0",
              aliases: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"schema_version": "1.4.0", "id": vid, "modified": "2026-01-01T00:00:00Z",
            "published": "2026-01-01T00:00:00Z", "aliases": list(aliases), "summary": summary, "details": summary,
            "affected": [{"package": {"name": package, "ecosystem": ecosystem},
                          "ranges": [{"type": "SEMVER" if ecosystem == "Go" else "ECOSYSTEM",
                                      "events": [{"introduced": introduced}, {"fixed": fixed}]}]}]}


def _v(text: str) -> Version | None:
    try:
        return Version(text.removeprefix("v"))
    except InvalidVersion:
        return None


@dataclass
class OsvDatabase:
    root: Path

    def add(self, entry: dict[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / f"{entry['id']}.json").write_text(json.dumps(entry, indent=2))

    def entries(self) -> list[dict[str, Any]]:
        return [json.loads(p.read_text()) for p in sorted(self.root.glob("*.json"))]

    def affecting(self, ecosystem: str, package: str, version: str) -> list[tuple[dict[str, Any], str]]:
        """(entry, fixed version) for each entry whose range holds `version`."""
        have = _v(version)
        out = []
        for entry in self.entries():
            for aff in entry["affected"]:
                if aff["package"]["ecosystem"] != ecosystem or aff["package"]["name"].lower() != package.lower():
                    continue
                for rng in aff["ranges"]:
                    events = {k: v for e in rng["events"] for k, v in e.items()}
                    low, fixed = _v(events.get("introduced", "0")), _v(events.get("fixed", ""))
                    if have and low is not None and low <= have and (fixed is None or have < fixed):
                        out.append((entry, events.get("fixed", "")))
        return out


def govulndb(root: Path, db: OsvDatabase) -> str:
    """Lay the Go entries out as a Go vulnerability database; returns its file:// URL."""
    (root / "index").mkdir(parents=True, exist_ok=True)
    (root / "ID").mkdir(exist_ok=True)
    modules: dict[str, list[dict[str, str]]] = {}
    vulns = []
    for entry in db.entries():
        go = [a for a in entry["affected"] if a["package"]["ecosystem"] == "Go"]
        if not go:
            continue
        (root / "ID" / f"{entry['id']}.json").write_text(json.dumps(entry))
        vulns.append({"id": entry["id"], "modified": entry["modified"], "aliases": entry["aliases"]})
        for aff in go:
            fixed = next((e["fixed"] for r in aff["ranges"] for e in r["events"] if "fixed" in e), "")
            modules.setdefault(aff["package"]["name"], []).append(
                {"id": entry["id"], "modified": entry["modified"], "fixed": fixed})
    (root / "index" / "db.json").write_text(json.dumps({"modified": "2026-01-01T00:00:00Z"}))
    (root / "index" / "modules.json").write_text(json.dumps([{"path": p, "vulns": v} for p, v in modules.items()]))
    (root / "index" / "vulns.json").write_text(json.dumps(vulns))
    return f"file://{root}"


def make_ca(tmp: Path, host: str) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for `host`, made with the openssl CLI: (ca, cert, key)."""
    tmp.mkdir(parents=True, exist_ok=True)
    ca, ca_key, cert, key, csr = (tmp / n for n in ("ca.pem", "ca.key", "leaf.pem", "leaf.key", "leaf.csr"))
    ext = tmp / "leaf.ext"
    ext.write_text(f"subjectAltName=DNS:{host}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                   "extendedKeyUsage=serverAuth\n")
    for argv in (
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2",
         "-subj", "/CN=framework test CA", "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", f"/CN={host}"],
        ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert, "-days", "2",
         "-extfile", ext],
    ):
        subprocess.run(["openssl", *map(str, argv)], check=True, capture_output=True, timeout=60)
    return ca, cert, key


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Any

    def _send(self, status: int, doc: Any) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_CONNECT(self) -> None:  # noqa: N802 - HTTPS_PROXY: become the TLS server of the named host
        self.send_response(200, "Connection Established")
        self.end_headers()
        self.wfile.flush()
        tls = self.server.tls.wrap_socket(self.connection, server_side=True)
        self.connection = tls
        self.rfile = tls.makefile("rb")
        self.wfile = socketserver._SocketWriter(tls)  # type: ignore[attr-defined]
        self.close_connection = False

    def do_POST(self) -> None:  # noqa: N802
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Content-Encoding") == "gzip":  # npm compresses its bulk request
            raw = gzip.decompress(raw)
        body = json.loads(raw or b"{}")
        db: OsvDatabase = self.server.db
        self.server.requests.append(self.path)
        if self.path == "/v1/query":
            pkg = body["package"]
            found = [e for e, _ in db.affecting(pkg["ecosystem"], pkg["name"], body["version"])]
            self._send(200, {"vulns": found} if found else {})
        elif self.path == "/-/npm/v1/security/advisories/bulk":
            out: dict[str, list[dict[str, Any]]] = {}
            for name, versions in body.items():
                for version in versions:
                    for n, (entry, fixed) in enumerate(db.affecting("npm", name, version)):
                        out.setdefault(name, []).append({
                            "id": 1000 + n, "url": f"https://osv.dev/vulnerability/{entry['id']}",
                            "title": entry["summary"], "severity": "high", "vulnerable_versions": f"<{fixed}",
                            "cwe": [], "cvss": {"score": 7.5, "vectorString": None}})
            self._send(200, out)
        else:
            self._send(404, {"error": "not found"})

    def do_GET(self) -> None:  # noqa: N802 - packuments: the stand-in serves advisories only
        self._send(404, {"error": "not found"})

    def log_message(self, *args: object) -> None:
        pass


class OsvServiceStandIn:
    def __init__(self, db: OsvDatabase, ca_dir: Path, tls_host: str = "api.osv.dev") -> None:
        self.ca, cert, key = make_ca(ca_dir, tls_host)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.db, self.server.tls, self.server.requests = db, tls, []  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def requests(self) -> list[str]:
        return self.server.requests  # type: ignore[attr-defined,no-any-return]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
