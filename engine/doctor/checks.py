"""`framework doctor`: can this machine and project do what the project declares?

Each check returns status (`ok`, `warn`, `error`, `skip`), a detail and the fix. The project checks:
framework.yaml, KCL evaluates, toolchains per build type and runtime, the machine ledger (readable;
legacy file ledgers are stale: no longer read), credentials per declared control plane (expiry).
The machine checks (engine/doctor/machine.py): port blocks, the dev-stack ceiling, the platform
server, daemon instances. `--signal deploy` keeps what a deploy needs. Exit 1 when a check errs.
"""

from __future__ import annotations

import shutil
import subprocess
import time

from engine.doctor.model import ERROR, OK, SKIP, WARN, Check, DoctorReport
from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError, UsageError
from engine.project import Project

DEPLOY = "deploy"
SIGNALS = (DEPLOY,)
EXPIRY_WARNING_SECONDS = 7 * 24 * 3600


def _version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0] if out.returncode == 0 and text else None


# build type / runtime -> (command, version argv, install hint)
TOOLCHAINS: dict[str, tuple[str, list[str], str]] = {
    "go": ("go", ["go", "version"], "install Go from https://go.dev/dl/ and put it on PATH"),
    "docker": ("docker", ["docker", "version", "--format", "{{.Server.Version}}"],
               "install Docker and start its daemon (a docker build needs a reachable daemon)"),
    "shell": ("sh", ["sh", "-c", "echo sh"], "install a POSIX shell"),
    "k8s": ("kubectl", ["kubectl", "version", "--client"], "install kubectl"),
    # the compose runtime's CLI (docs/reference-cluster.md#compose-target: a standalone docker-compose first)
    "compose": ("docker-compose", ["docker-compose", "version"],
                "install Docker Compose (Debian: docker.io and docker-compose; `make system-deps`)"),
    "node": ("npm", ["npm", "--version"], "install Node.js and npm"),
}


def _needs(specs: list[EnvironmentSpec]) -> dict[str, list[str]]:
    """Toolchain -> environments needing it (build types, runtimes, frontends, run commands)."""
    needs: dict[str, list[str]] = {}
    for spec in specs:
        wanted: set[str] = {w.build.type for w in spec.workloads if w.build and w.build.type in TOOLCHAINS}
        if spec.runtime in ("k8s", "compose"):
            wanted.add(spec.runtime)
        if spec.frontends:
            wanted.add("node")
        wanted |= {f"run:{w.run[0]}" for w in spec.workloads if w.run and spec.runtime == "process"}
        for tool in wanted:
            needs.setdefault(tool, []).append(spec.name)
    return needs


def toolchain_checks(specs: list[EnvironmentSpec]) -> list[Check]:
    out = []
    for tool, envs in sorted(_needs(specs).items()):
        used = f"used by {', '.join(sorted(envs))}"
        if tool.startswith("run:"):
            program = tool[4:]
            found = shutil.which(program) or (program if "/" in program else None)
            out.append(Check(name=f"toolchain:{program}", status=OK if found else ERROR, signals=[DEPLOY],
                             detail=f"{found} ({used})" if found else f"{program} is not on PATH ({used})",
                             fix=None if found else f"install {program} or fix the workload's `run`"))
            continue
        command, argv, hint = TOOLCHAINS[tool]
        if not shutil.which(command):
            out.append(Check(name=f"toolchain:{tool}", status=ERROR, signals=[DEPLOY],
                             detail=f"{command} is not on PATH ({used})", fix=hint))
            continue
        version = _version(argv)
        out.append(Check(name=f"toolchain:{tool}", status=OK if version else ERROR, signals=[DEPLOY],
                         detail=f"{version} ({used})" if version else f"`{' '.join(argv)}` failed ({used})",
                         fix=None if version else hint))
    return out


def kcl_check(project: Project) -> tuple[Check, list[EnvironmentSpec]]:
    from engine.environments.evaluate import declared_names, evaluate_environment

    specs, bad = [], []
    names = declared_names(project)
    for name in names:
        try:
            specs.append(evaluate_environment(project, name))
        except EngineError as exc:
            bad.append(f"{name}: {exc.message}")
    if bad:
        return Check(name="kcl", status=ERROR, signals=[DEPLOY], detail="; ".join(bad),
                     fix="framework env render <env> shows the error in full; fix deploy/kcl/<env>/main.k"), specs
    return Check(name="kcl", status=OK, signals=[DEPLOY],
                 detail=f"{len(names)} environment(s) evaluate: {', '.join(names) or 'none declared'}"), specs


def ledger_check(project: Project) -> Check:
    from engine.ledger.store import Ledger

    try:
        with Ledger.open(project.key) as ledger:
            envs = ledger.envs()
            path = ledger.path
    except EngineError as exc:
        return Check(name="ledger", status=ERROR, signals=[DEPLOY], detail=exc.message,
                     fix=exc.hint or "check FRAMEWORK_LEDGER_HOME and the file's permissions")
    legacy = sorted(p.stem for p in (project.root / ".framework" / "promotions").glob("*.jsonl"))
    if legacy:
        return Check(name="ledger", status=WARN, signals=[DEPLOY],
                     detail=f"stale file ledger for {', '.join(legacy)} (.framework/promotions/*.jsonl is no longer "
                            f"read); the machine ledger {path} holds {len(envs)} environment(s)",
                     fix="framework ledger import --from-file-ledger .framework/promotions --apply")
    return Check(name="ledger", status=OK, signals=[DEPLOY],
                 detail=f"{path} readable; promotions for {', '.join(envs) or 'no environment yet'}")


def credential_checks(specs: list[EnvironmentSpec], now: float | None = None) -> list[Check]:
    from engine.auth import credentials

    now = time.time() if now is None else now
    planes: dict[str, tuple[str, list[str]]] = {}
    for spec in specs:
        if spec.on_control_plane:
            cp = spec.control_plane
            endpoint = credentials.normalize(cp.endpoint) if cp and cp.endpoint else credentials.DEFAULT_CONTROL_PLANE
            token_env = (cp.token_env if cp else None) or credentials.CONTROL_PLANE_TOKEN_ENV
            planes.setdefault(endpoint, (token_env, []))[1].append(spec.name)
    out = []
    for endpoint, (token_env, envs) in sorted(planes.items()):
        name, fix = f"credentials:{endpoint}", f"framework login --endpoint {endpoint} (or set {token_env} in CI)"
        used = f"for {', '.join(envs)}"
        try:
            resolved = credentials.resolve_control_plane(endpoint, token_env=token_env, declared=True)
        except EngineError as exc:  # e.g. a corrupt credentials file
            out.append(Check(name=name, status=ERROR, signals=[DEPLOY], detail=exc.message, fix=exc.hint or fix))
            continue
        if resolved.token is None:
            what = "the stored login has expired" if resolved.expired_login else "no credential"
            out.append(Check(name=name, status=ERROR, signals=[DEPLOY], detail=f"{what} {used}", fix=fix))
        elif resolved.expires_at and resolved.expires_at - now < EXPIRY_WARNING_SECONDS:
            days = max(0.0, (resolved.expires_at - now) / 86400)
            out.append(Check(name=name, status=WARN, signals=[DEPLOY], fix=fix,
                             detail=f"login expires in {days:.1f} days ({resolved.token_source}) {used}"))
        else:
            until = (time.strftime(", until %Y-%m-%d", time.gmtime(resolved.expires_at))
                     if resolved.expires_at else "")
            out.append(Check(name=name, status=OK, signals=[DEPLOY],
                             detail=f"{resolved.token_source}{until} {used}"))
    return out


def _project_checks(project: Project) -> list[Check]:
    try:
        project.config  # noqa: B018 - parse it now: a broken framework.yaml is the first thing to fix
    except EngineError as exc:
        return [Check(name="project", status=ERROR, signals=[DEPLOY], detail=exc.message,
                      fix="fix framework.yaml (YAML mapping: name, services, ...)")]
    checks = [Check(name="project", status=OK, signals=[DEPLOY], detail=f"{project.name} at {project.root}")]
    kcl, specs = kcl_check(project)
    return checks + [kcl, *toolchain_checks(specs), ledger_check(project), *credential_checks(specs)]


def doctor(project: Project | None, signal: str | None = None) -> tuple[DoctorReport, int]:
    from engine.doctor.machine import machine_checks

    if signal is not None and signal not in SIGNALS:
        raise UsageError(f"unknown signal {signal!r}", hint=f"known signals: {', '.join(SIGNALS)}")
    if project is None:
        checks = [Check(name="project", status=SKIP, signals=[DEPLOY], detail="no framework.yaml here or above",
                        fix="run inside a framework project for its checks")]
    else:
        checks = _project_checks(project)
    if signal is None:  # the machine's side is nothing a deploy needs
        checks += machine_checks(project)
    if signal is not None:
        checks = [c for c in checks if signal in c.signals]
    counts = {s: sum(1 for c in checks if c.status == s) for s in (OK, WARN, ERROR, SKIP)}
    report = DoctorReport(project=str(project.root) if project else None, signal=signal, checks=checks, counts=counts)
    return report, (1 if counts[ERROR] else 0)
