"""Bench: hosted deploys and status against a local control plane (docs/reference-hosted.md).

1. A hosted deploy of an unchanged release (plan against the control plane's ledger, nothing appended, and the
   converge check) vs the same deploy of a self-managed environment on the machine ledger, same run,
   same workload (aim: ratio <= 1.5).
2. `env status` of 20 hosted environments vs 1 (aim: one round trip to the control plane, not 20;
   the requests are counted).

Everything is real: `platform server` on 127.0.0.1, a copy of the demo in a git repository, the
`framework` console script for the deploys (best of 5 each).
BENCH_SMOKE=1: 2 hosted environments instead of 20, one round each (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FRAMEWORK = str(Path(sys.executable).parent / "framework")
SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
MANY, ROUNDS = (2, 1) if SMOKE else (20, 5)
ENV_KCL = """import framework

environment = framework.Environment {{
    name = "{name}"
    kind = "{kind}"
    {where}
    workloads = [
        framework.Workload {{
            name = "api"
            build = framework.Build {{type = "shell", command = "python3 -m py_compile services/api/main.py"}}
            run = ["python3", "services/api/main.py"]
            ports = [framework.Port {{port = {port}}}]
            health = framework.HealthCheck {{path = "/healthz"}}
        }}
    ]
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def admin(data: Path) -> None:
    """The organizations `platform server org add|grant|billing` would set up, through the engine calls those
    commands make, in this process (setup, not measured: no CLI process per step)."""
    from engine.auth.accounts import add_org, grant, server_store
    from engine.controlplane.state import set_billing

    store = server_store(data)
    perms = ["deploy:read", "deploy:write", "deploy:promote"]
    add_org(store, "acme")
    grant(store, "acme", perms)
    set_billing(store, "acme", True)
    add_org(store, "beta")
    grant(store, "beta", perms)


def start_plane(env: dict[str, str], data: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "app.main", "platform", "server", "--port", "0", "--data-dir",
                             str(data)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("platform server listening on "):
            return proc, line.rsplit(" ", 1)[1].strip()
    raise SystemExit("the control plane did not start")


def mint(data: Path, org: str) -> str:
    """An automation token of `org` (the server's own token minting, in this process)."""
    from sqlalchemy import select

    from engine.auth import tables as t
    from engine.auth.accounts import server_store
    from engine.auth.tokens import mint as mint_token
    from engine.serverstore import store

    with store.write(server_store(data)) as c:
        org_id = c.execute(select(t.orgs.c.id).where(t.orgs.c.name == org)).scalar_one()
        token: str = mint_token(c, kind="automation", org_id=org_id, scope="deploy:read deploy:write deploy:promote",
                                ttl_s=3600, name="bench").token
    return token


def fw(root: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    done = subprocess.run([FRAMEWORK, *args, "--json"], cwd=root, env=env, capture_output=True, text=True)
    doc: dict[str, object] = json.loads(done.stdout)
    return doc


def best_deploy(root: Path, env: dict[str, str], name: str, version: str, rounds: int = ROUNDS) -> float:
    """Best of `rounds`; the machine ledger's health gate waits with a 0 s stability window, so both
    sides check convergence once instead of the machine side sleeping through its default 2 s."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        doc = fw(root, env, "env", "deploy", name, version, "--yes", "--stability-window", "0")
        times.append(time.perf_counter() - start)
        assert doc["exit_code"] == 0 and doc["appended"] is False, doc
    return min(times)


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-hosted-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FRAMEWORK_", "DATABASE_"))}
    env.update(HOME=str(tmp / "home"), XDG_CACHE_HOME=str(tmp / "cache"), FRAMEWORK_LEDGER_HOME=str(tmp / "ledger"),
               GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.test", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@example.test", NO_COLOR="1", PYTHONUNBUFFERED="1")
    for key in [k for k in os.environ if k.startswith("DATABASE_")]:  # the store is the data dir's, as for the plane
        del os.environ[key]
    data = tmp / "data"
    plane, url = start_plane(env, data)
    try:
        admin(data)
        root = tmp / "demo"
        shutil.copytree(ROOT / "examples" / "demo", root, ignore=shutil.ignore_patterns("__pycache__", ".framework"))
        kcl = root / "deploy" / "kcl"
        cp = f'control_plane = framework.ControlPlane {{endpoint = "{url}"}}'
        (kcl / "hosted").mkdir()
        (kcl / "hosted" / "main.k").write_text(ENV_KCL.format(name="hosted", kind="hosted", where=cp, port=free_port()))
        (kcl / "machine").mkdir()
        (kcl / "machine" / "main.k").write_text(ENV_KCL.format(name="machine", kind="self_managed",
                                                               where="target = framework.Process {}", port=free_port()))
        for i in range(MANY):
            (kcl / f"q{i:02d}").mkdir()
            (kcl / f"q{i:02d}" / "main.k").write_text(ENV_KCL.format(name=f"q{i:02d}", kind="hosted", where=cp,
                                                                    port=free_port()))
        for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "bench")):
            subprocess.run(["git", *args], cwd=root, env=env, check=True)
        acme = {**env, "FRAMEWORK_CONTROL_PLANE_TOKEN": mint(data, "acme")}
        first = fw(root, acme, "env", "deploy", "hosted", "--yes")
        assert first["exit_code"] == 0, first
        version = str(first["target"]["release"])  # type: ignore[index]
        assert fw(root, acme, "env", "deploy", "machine", version, "--yes")["exit_code"] == 0
        hosted_s = best_deploy(root, acme, "hosted", version)
        machine_s = best_deploy(root, acme, "machine", version)
        print(f"deploy of an unchanged release: hosted {hosted_s * 1000:.0f} ms, machine ledger "
              f"{machine_s * 1000:.0f} ms; ratio {hosted_s / machine_s:.2f}x (aim <= 1.5x)")

        beta = {**env, "FRAMEWORK_CONTROL_PLANE_TOKEN": mint(data, "beta")}
        for i in range(MANY):  # beta has no billing: each deploy is recorded and queued (nothing runs)
            assert fw(root, beta, "env", "deploy", f"q{i:02d}", version, "--yes")["exit_code"] == 7
        status_20, requests_20 = status_of(root, beta, [f"q{i:02d}" for i in range(MANY)])
        status_1, requests_1 = status_of(root, beta, ["q00"])
        print(f"env status of {MANY} hosted environments: {status_20 * 1000:.1f} ms in {requests_20} request(s); of 1: "
              f"{status_1 * 1000:.1f} ms in {requests_1} request(s); ratio {status_20 / status_1:.2f}x "
              f"(aim: one round trip, not {MANY})")
    finally:
        plane.terminate()
        plane.wait(15)
        from engine.runtime.process import stop_env  # every process the deploys started, in this process

        for org_dir in (data / "hosted" / "projects").glob("*"):
            for e in (org_dir / "runtime").glob("*"):
                stop_env(org_dir.name, e.name, data / "hosted")
        for e in (tmp / "ledger" / "projects" / "demo" / "runtime").glob("*"):
            stop_env("demo", e.name, tmp / "ledger")
        shutil.rmtree(tmp, ignore_errors=True)


def status_of(root: Path, env: dict[str, str], names: list[str]) -> tuple[float, int]:
    """The status reads of `env status` for the named hosted environments, in this process, with the
    HTTP requests counted (best of 5)."""
    import httpx

    from engine.deploy.hosted_status import hosted_statuses
    from engine.environments.evaluate import evaluate_environment
    from engine.project import find_project

    os.environ.update(env)
    project = find_project(root)
    specs = {n: evaluate_environment(project, n) for n in names}
    sent = [0]
    original = httpx.Client.send

    def counting(self: httpx.Client, request: httpx.Request, **kw: object) -> httpx.Response:
        sent[0] += 1
        return original(self, request, **kw)  # type: ignore[arg-type]

    httpx.Client.send = counting  # type: ignore[method-assign]
    times = []
    try:
        for _ in range(ROUNDS):
            sent[0] = 0
            start = time.perf_counter()
            out = hosted_statuses(specs)
            times.append(time.perf_counter() - start)
            assert all(s.exit_code == 7 for s in out.values()), out
    finally:
        httpx.Client.send = original  # type: ignore[method-assign]
    return min(times), sent[0]


if __name__ == "__main__":
    main()
