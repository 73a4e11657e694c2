"""`ci vuln-scan`: run the vulnerability scanners framework.yaml configures (docs/reference-ci.md#commands:
fails when a selected scanner cannot run or none is selected).

    ci:
      vuln_scan:
        scanners:
          - {name: pip-audit, path: services/api, requirements: requirements.txt}   # pinned name==version
          - {name: govulncheck, path: services/worker, db: https://vuln.go.dev}
          - {name: npm-audit, path: web, registry: https://registry.npmjs.org}

pip-audit audits the pinned requirements as written (`--no-deps --disable-pip`, OSV service);
govulncheck scans the module's packages (`-db` when configured); npm audit reads the package-lock.
Each finding: scanner, id, package, version, fixed version, summary. Exit 0 no finding; 1 findings;
2 a selected scanner could not run (missing, crashed, unreadable output) or none is selected.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.errors import ConfigError, EngineError
from engine.paths import pinned_tool
from engine.project import Project

SCANNERS = ("pip-audit", "govulncheck", "npm-audit")
TIMEOUT_SECONDS = 600


class ScannerCannotRun(EngineError):
    exit_code = 2
    code = "scanner_cannot_run"


class ScannerConfig(BaseModel):
    name: str
    path: str = "."
    requirements: str = "requirements.txt"
    db: str | None = None
    registry: str | None = None
    service: str = "osv"


class Finding(BaseModel):
    scanner: str
    id: str
    package: str
    version: str
    fixed: str | None
    summary: str = ""
    aliases: list[str] = []


class ScannerRun(BaseModel):
    name: str
    path: str
    command: list[str]
    status: str  # clean | findings
    findings: int


class VulnScanReport(BaseModel):
    scanners: list[ScannerRun]
    findings: list[Finding]


def configured(project: Project) -> list[ScannerConfig]:
    ci = project.config.get("ci") or {}
    section = ci.get("vuln_scan") if isinstance(ci, dict) else None
    raw = (section or {}).get("scanners") if isinstance(section, (dict, type(None))) else None
    if section is not None and not isinstance(raw, list):
        raise ConfigError("framework.yaml: ci.vuln_scan.scanners must be a list of {name, path, ...}")
    out = []
    for i, entry in enumerate(raw or []):
        if not isinstance(entry, dict) or entry.get("name") not in SCANNERS:
            raise ConfigError(f"framework.yaml: ci.vuln_scan.scanners[{i}]: name must be one of {', '.join(SCANNERS)}")
        out.append(ScannerConfig.model_validate(entry))
    return out


def _program(name: str) -> str:
    if name == "pip-audit":
        candidates = [os.environ.get("FRAMEWORK_PIP_AUDIT"), str(Path(sys.executable).parent / "pip-audit"),
                      shutil.which("pip-audit")]
        hint = "pip install pip-audit (make test installs the pinned one into .venv)"
    elif name == "govulncheck":
        candidates = [pinned_tool("govulncheck", "FRAMEWORK_GOVULNCHECK")]
        hint = "make go-tools (installs the pinned govulncheck into .tools/bin)"
    else:
        candidates, hint = [shutil.which("npm")], "install Node.js and npm"
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    raise ScannerCannotRun(f"{name} is not installed", hint=hint)


def _run(name: str, argv: list[str], cwd: Path, ok_codes: tuple[int, ...]) -> str:
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ScannerCannotRun(f"{name} could not run in {cwd}: {exc}") from exc
    if proc.returncode not in ok_codes:
        tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-3:]
        raise ScannerCannotRun(f"{name} failed in {cwd} (exit {proc.returncode}): {' | '.join(tail)}")
    return proc.stdout


def _pip_audit(cfg: ScannerConfig, cwd: Path) -> tuple[list[str], list[Finding]]:
    argv = [_program("pip-audit"), "-r", cfg.requirements, "--no-deps", "--disable-pip", "-s", cfg.service,
            "-f", "json", "--progress-spinner", "off"]
    doc = _json(cfg.name, _run(cfg.name, argv, cwd, (0, 1)))
    out = []
    for dep in doc.get("dependencies", []):
        for v in dep.get("vulns", []):
            fixed = v.get("fix_versions") or []
            out.append(Finding(scanner=cfg.name, id=v["id"], package=dep["name"], version=dep.get("version", ""),
                               fixed=fixed[0] if fixed else None, summary=v.get("description") or "",
                               aliases=v.get("aliases") or []))
    return argv, out


def _govulncheck(cfg: ScannerConfig, cwd: Path) -> tuple[list[str], list[Finding]]:
    argv = [_program("govulncheck"), *(["-db", cfg.db] if cfg.db else []), "-json", "./..."]
    text = _run(cfg.name, argv, cwd, (0,))
    decoder, i, osv, seen, out = json.JSONDecoder(), 0, {}, set(), []
    while True:  # a stream of JSON objects (not one per line)
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        try:
            msg, i = decoder.raw_decode(text, i)
        except ValueError as exc:
            raise ScannerCannotRun(f"govulncheck output is not its JSON stream: {exc}") from exc
        if "osv" in msg:
            osv[msg["osv"]["id"]] = msg["osv"]
        finding = msg.get("finding")
        if finding and finding.get("trace"):
            top = finding["trace"][0]
            key = (finding["osv"], top.get("module"))
            if key in seen:
                continue
            seen.add(key)
            entry = osv.get(finding["osv"], {})
            out.append(Finding(scanner=cfg.name, id=finding["osv"], package=top.get("module", ""),
                               version=top.get("version", ""), fixed=finding.get("fixed_version"),
                               summary=entry.get("summary", ""), aliases=entry.get("aliases") or []))
    return argv, out


def _npm_audit(cfg: ScannerConfig, cwd: Path) -> tuple[list[str], list[Finding]]:
    argv = [_program("npm-audit"), "audit", "--json", *(["--registry", cfg.registry] if cfg.registry else [])]
    doc = _json(cfg.name, _run(cfg.name, argv, cwd, (0, 1)))
    if "error" in doc and "vulnerabilities" not in doc:
        error = doc["error"] if isinstance(doc["error"], dict) else {}
        why = error.get("summary") or error.get("detail") or error.get("code") or "no report (see `npm audit`)"
        raise ScannerCannotRun(f"npm audit failed in {cwd}: {why}")
    lock = _lock_versions(cwd)
    out = []
    for name, vuln in sorted((doc.get("vulnerabilities") or {}).items()):
        for via in vuln.get("via", []):
            if not isinstance(via, dict):
                continue  # "via" a vulnerable dependency: reported under that dependency
            rng = str(via.get("range", ""))
            fixed = re.fullmatch(r"<\s*([0-9][^\s|]*)", rng)
            out.append(Finding(scanner=cfg.name, id=str(via.get("url", "")).rsplit("/", 1)[-1] or str(via["source"]),
                               package=name, version=lock.get(name, ""), fixed=fixed.group(1) if fixed else None,
                               summary=str(via.get("title", ""))))
    return argv, out


def _lock_versions(cwd: Path) -> dict[str, str]:
    try:
        packages = json.loads((cwd / "package-lock.json").read_text()).get("packages") or {}
    except (OSError, ValueError):
        return {}
    return {k.rsplit("node_modules/", 1)[-1]: v.get("version", "") for k, v in packages.items() if k}


def _json(name: str, text: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ScannerCannotRun(f"{name} printed no JSON report: {exc}") from exc
    if not isinstance(doc, dict):
        raise ScannerCannotRun(f"{name} printed an unexpected report")
    return doc


RUNNERS = {"pip-audit": _pip_audit, "govulncheck": _govulncheck, "npm-audit": _npm_audit}


def vuln_scan(project: Project, selected: list[str] | None = None) -> tuple[VulnScanReport, int]:
    scanners = configured(project)
    if selected:
        unknown = [s for s in selected if s not in SCANNERS]
        if unknown:
            raise ScannerCannotRun(f"unknown scanner {', '.join(unknown)}", hint=f"scanners: {', '.join(SCANNERS)}")
        missing = [s for s in selected if s not in {c.name for c in scanners}]
        if missing:
            raise ScannerCannotRun(f"{', '.join(missing)} selected but not configured in framework.yaml "
                                   "ci.vuln_scan.scanners")
        scanners = [c for c in scanners if c.name in selected]
    if not scanners:
        raise ScannerCannotRun("no scanner selected: framework.yaml configures none (ci.vuln_scan.scanners)",
                               hint="add pip-audit, govulncheck or npm-audit entries with their path")
    runs, findings = [], []
    for cfg in scanners:
        cwd = (project.root / cfg.path).resolve()
        if not cwd.is_dir():
            raise ScannerCannotRun(f"{cfg.name}: {cfg.path} is not a directory of the project")
        argv, found = RUNNERS[cfg.name](cfg, cwd)
        runs.append(ScannerRun(name=cfg.name, path=cfg.path, command=argv,
                               status="findings" if found else "clean", findings=len(found)))
        findings += found
    return VulnScanReport(scanners=runs, findings=findings), (1 if findings else 0)
