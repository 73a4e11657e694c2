"""`doctor parity <svc> [--env dev]` (docs/reference-ci.md#commands): host mode (the dev stack's
process) against cluster mode (the K8sCluster render); bug-class divergences exit 1, secret-channel
ones alone exit 0. Real KCL, real git worktrees and port blocks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from ci_fixtures import project_fixture  # noqa: E402,F401

DEV = """import framework

environment = framework.Environment {
    name = "dev"
    kind = "local"
    target = framework.Process {}
    workloads = [
        framework.Workload {
            name = "api"
            run = ["python3", "api.py"]
            env = {GREETING = "hello"}
            secrets = ["DATABASE_URL"]
            ports = [framework.Port {port = 8080}]
        }
        framework.Workload {
            name = "web"
            run = ["python3", "web.py"]
            env = {API_URL = "%s"}
            ports = [framework.Port {port = 8081}]
        }
    ]
}
"""


def write_dev(root: Path, api_url: str) -> None:
    path = root / "deploy" / "kcl" / "dev" / "main.k"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(DEV % api_url)


def by_name(doc) -> dict[str, dict]:
    return {d["name"]: d for d in doc["divergences"]}


def test_secret_channel_only_exits_0(project):
    """A secret reaches the process from the shell (host) or Secret <svc>-secrets (cluster): secret-channel,
    exit 0; PORT and plain variables agree."""
    write_dev(project.root, "http://api:8080")
    code, doc = project.json("doctor", "parity", "api")
    assert code == 0, doc
    assert doc["verdict"] == "secret-channel-only" and doc["env"] == "dev"
    secret = by_name(doc)["DATABASE_URL"]
    assert secret["kind"] == "secret-channel"
    assert secret["host"] == "(secret from this shell's environment: unset)"
    assert secret["cluster"] == "(secret from Secret api-secrets, key DATABASE_URL)"
    assert doc["host"]["GREETING"] == doc["cluster"]["GREETING"] == "hello"
    assert doc["host"]["PORT"] == doc["cluster"]["PORT"] == "8080"
    code, doc = project.json("doctor", "parity", "api", extra_env={"DATABASE_URL": "postgres://x"})
    assert code == 0 and "set)" in by_name(doc)["DATABASE_URL"]["host"] and "postgres://x" not in str(doc)


def test_loopback_address_is_bug_class_exit_1(project):
    """A loopback URL works on the host but reaches only the pod in a cluster: bug-class, exit 1."""
    write_dev(project.root, "http://127.0.0.1:8080")
    code, doc = project.json("doctor", "parity", "web", "--env", "dev")
    assert code == 1 and doc["error"]["code"] == "parity_bug_class"
    api_url = by_name(doc)["API_URL"]
    assert api_url["kind"] == "bug-class" and "loopback" in api_url["why"]
    proc = project.run("doctor", "parity", "web")
    assert proc.returncode == 1 and "bug-class      API_URL" in proc.stdout


def test_port_of_another_workload_in_a_worktree_block_is_bug_class(project, tmp_path):
    """In a worktree whose port block is 1, the host processes listen on port + 100: PORT agrees after the
    offset, but a value naming another workload's declared port diverges (bug-class)."""
    write_dev(project.root, "http://api:8080")
    env = {**project.env, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.test", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e.test"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "p"],
                 ["worktree", "add", "-q", str(tmp_path / "wt"), "-b", "feature"]):
        subprocess.run(["git", *args], cwd=project.root, env=env, check=True)
    worktree = type(project)(root=tmp_path / "wt", env=project.env)
    assert worktree.run("env", "devstack", "port", "8080").stdout.strip() == "8180"
    code, doc = worktree.json("doctor", "parity", "web")
    assert code == 1 and doc["port_offset"] == 100
    assert doc["host"]["PORT"] == "8181" and doc["cluster"]["PORT"] == "8081" and "PORT" not in by_name(doc)
    assert "listens on 8180" in by_name(doc)["API_URL"]["why"]
    code, doc = project.json("doctor", "parity", "web")  # the primary checkout (block 0): no divergence
    assert code == 0 and doc["verdict"] == "parity"


def test_unknown_service_is_usage(project):
    """An unknown service is a usage error naming the workloads."""
    write_dev(project.root, "http://api:8080")
    code, doc = project.json("doctor", "parity", "nope")
    assert code == 2 and "api, web" in doc["error"]["hint"]
