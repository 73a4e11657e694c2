"""`ci vuln-scan` (docs/reference-ci.md#commands; fails when a selected scanner cannot run): the real
scanners (pip-audit, govulncheck, npm audit; pinned, installed by `make test`) against a local vulnerability
database the tests write, never the network (tests/vuln_fixtures.py: OSV directory, Go vulnerability
database, OSV service stand-in)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from ci_fixtures import project_fixture  # noqa: E402,F401
from registry_fixtures import go_module_proxy  # noqa: E402
from vuln_fixtures import OsvDatabase, OsvServiceStandIn, govulndb, osv_entry  # noqa: E402

CONFIG = """ci:
  vuln_scan:
    scanners:
      - {name: pip-audit, path: services/py}
      - {name: govulncheck, path: services/go, db: %s}
      - {name: npm-audit, path: web, registry: %s}
"""


@pytest.fixture
def scanned(project, tmp_path):
    """A project with a Python service, a Go service and a frontend, each pinning a vulnerable version;
    the OSV directory, the Go database and the OSV service stand-in that serve their advisories."""
    db = OsvDatabase(tmp_path / "osv")
    db.add(osv_entry("PYSEC-2026-7", "PyPI", "demo-lib", "1.0.1", "demo-lib parses untrusted input",
                     aliases=("CVE-2026-7",)))
    db.add(osv_entry("GO-2026-0001", "Go", "example.test/lib", "1.0.1", "Parse overflows"))
    db.add(osv_entry("GHSA-demo-0001", "npm", "left-pad", "1.3.1", "left-pad pads too much"))
    standin = OsvServiceStandIn(db, tmp_path / "ca")
    py = project.root / "services" / "py"
    py.mkdir(parents=True)
    (py / "requirements.txt").write_text("demo-lib==1.0.0\nsafe-lib==2.0.0\n")
    go = project.root / "services" / "go"
    go.mkdir(parents=True)
    (go / "go.mod").write_text("module example.test/app\n\ngo 1.22\n\nrequire example.test/lib v1.0.0\n")
    (go / "main.go").write_text('package main\n\nimport (\n\t"fmt"\n\n\t"example.test/lib"\n)\n\n'
                                'func main() { fmt.Println(lib.Parse("x")) }\n')
    web = project.root / "web"
    web.mkdir()
    (web / "package.json").write_text(json.dumps({"name": "web", "version": "1.0.0",
                                                  "dependencies": {"left-pad": "1.3.0"}}))
    (web / "package-lock.json").write_text(json.dumps({
        "name": "web", "version": "1.0.0", "lockfileVersion": 3, "requires": True, "packages": {
            "": {"name": "web", "version": "1.0.0", "dependencies": {"left-pad": "1.3.0"}},
            "node_modules/left-pad": {"version": "1.3.0", "resolved": f"{standin.url}/left-pad/-/left-pad-1.3.0.tgz",
                                      "integrity": "sha512-" + "A" * 86 + "=="}}}))
    proxy = go_module_proxy(tmp_path, "example.test/lib", ["v1.0.0", "v1.0.1"])
    project.env.update({
        "GOTOOLCHAIN": "local", "GOPROXY": f"file://{proxy}", "GOSUMDB": "off", "GOFLAGS": "-mod=mod -modcacherw",
        "GOMODCACHE": str(tmp_path / "modcache"), "GOPRIVATE": "", "GONOSUMDB": "",
        "HTTPS_PROXY": standin.url, "https_proxy": standin.url, "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost", "REQUESTS_CA_BUNDLE": str(standin.ca),
    })
    godb = govulndb(tmp_path / "govulndb", db)
    project.config(CONFIG % (godb, standin.url))
    try:
        yield project, standin, tmp_path
    finally:
        standin.close()


def test_every_configured_scanner_reports_its_findings(scanned):
    """Findings with id, package, version and fixed version from pip-audit, govulncheck and npm audit; exit 1."""
    project, standin, _ = scanned
    code, doc = project.json("ci", "vuln-scan", timeout=300)
    assert code == 1, doc
    assert doc["error"]["code"] == "vulnerabilities_found"
    assert [(r["name"], r["status"]) for r in doc["scanners"]] == [
        ("pip-audit", "findings"), ("govulncheck", "findings"), ("npm-audit", "findings")]
    got = {(f["scanner"], f["id"], f["package"], f["version"], f["fixed"]) for f in doc["findings"]}
    assert got == {("pip-audit", "PYSEC-2026-7", "demo-lib", "1.0.0", "1.0.1"),
                   ("govulncheck", "GO-2026-0001", "example.test/lib", "v1.0.0", "v1.0.1"),
                   ("npm-audit", "GHSA-demo-0001", "left-pad", "1.3.0", "1.3.1")}
    assert "/v1/query" in standin.requests and "/-/npm/v1/security/advisories/bulk" in standin.requests
    proc = project.run("ci", "vuln-scan", "--scanner", "npm-audit")
    assert proc.returncode == 1 and "GHSA-demo-0001" in proc.stdout and "fixed in 1.3.1" in proc.stdout


def test_a_fixed_version_is_clean(scanned):
    """After upgrading to the fixed version the selected scanner reports nothing: exit 0."""
    project, _, _ = scanned
    go = project.root / "services" / "go" / "go.mod"
    go.write_text(go.read_text().replace("v1.0.0", "v1.0.1"))
    (project.root / "services" / "py" / "requirements.txt").write_text("demo-lib==1.0.1\n")
    code, doc = project.json("ci", "vuln-scan", "--scanner", "govulncheck", "--scanner", "pip-audit", timeout=300)
    assert code == 0, doc
    assert [(r["name"], r["status"]) for r in doc["scanners"]] == [("pip-audit", "clean"), ("govulncheck", "clean")]


def test_a_selected_scanner_that_cannot_run_fails(scanned):
    """`ci vuln-scan` (docs/reference-ci.md#commands): a selected scanner that cannot run
    (no lockfile for npm audit; a Go package that does not build) fails the command (exit 2), naming it."""
    project, _, _ = scanned
    (project.root / "web" / "package-lock.json").unlink()
    code, doc = project.json("ci", "vuln-scan", "--scanner", "npm-audit")
    assert code == 2 and doc["error"]["code"] == "scanner_cannot_run" and "npm" in doc["error"]["message"]
    (project.root / "services" / "go" / "main.go").write_text("package main\n\nfunc main() { undefined() }\n")
    code, doc = project.json("ci", "vuln-scan", "--scanner", "govulncheck")
    assert code == 2 and "govulncheck failed" in doc["error"]["message"]


def test_none_selected_or_configured_fails(project):
    """`ci vuln-scan` (docs/reference-ci.md#commands): no scanner configured (or one selected that is
    not) fails; an unknown name in the configuration is a configuration error."""
    code, doc = project.json("ci", "vuln-scan")
    assert code == 2 and "no scanner selected" in doc["error"]["message"]
    project.config("ci:\n  vuln_scan:\n    scanners:\n      - {name: npm-audit, path: .}\n")
    code, doc = project.json("ci", "vuln-scan", "--scanner", "pip-audit")
    assert code == 2 and "not configured" in doc["error"]["message"]
    project.config("ci:\n  vuln_scan:\n    scanners:\n      - {name: trivy}\n")
    code, doc = project.json("ci", "vuln-scan")
    assert code == 1 and doc["error"]["code"] == "invalid_config"
