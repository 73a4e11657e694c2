"""`env build` dispatch on build type (docs/reference-deploy.md#commands) and `gate record` / `gate list`."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from deploy_fixtures import FRAMEWORK_BIN, demo_fixture  # noqa: E402,F401


def set_build(demo, build: str, workload: str = "api") -> None:
    dev = demo.root / "deploy" / "kcl" / "dev" / "main.k"
    old = f'framework.Build {{type = "shell", command = "python3 -m py_compile services/{workload}/main.py"}}'
    text = dev.read_text()
    assert old in text
    dev.write_text(text.replace(old, build))


def test_shell_build_runs_its_command_and_target_scopes(demo):
    """`shell` runs the workload's command in its context; --target scopes to one workload."""
    set_build(demo, 'framework.Build {type = "shell", command = "echo built > built.txt"}')
    code, doc = demo.json("env", "build", "dev", "--target", "api")
    assert code == 0, doc
    assert [(b["workload"], b["status"], b["type"]) for b in doc["builds"]] == [("api", "built", "shell")]
    assert (demo.root / "built.txt").read_text().strip() == "built"
    code, doc = demo.json("env", "build", "dev", "--target", "nope")
    assert code == 1 and "unknown workload" in doc["error"]["message"]


def test_failing_shell_build_reports_its_output(demo):
    """A failing build is a clear error carrying the tail of its output, never a traceback."""
    set_build(demo, 'framework.Build {type = "shell", command = "echo boom >&2; exit 7"}')
    proc = demo.run("env", "build", "dev")
    assert proc.returncode == 1 and "exited 7" in proc.stderr and "boom" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_go_build_without_toolchain_fails_clearly(demo):
    """`go` needs the Go toolchain; without it (Go hidden from PATH) the build fails with a clear message."""
    set_build(demo, 'framework.Build {type = "go", context = "services/api"}')
    go_dirs = {str(Path(p).parent) for p in (shutil.which("go"),) if p}
    path = os.pathsep.join(d for d in demo.env["PATH"].split(os.pathsep) if d not in go_dirs)
    env = {**demo.env, "PATH": path}
    assert shutil.which("go", path=path) is None  # the check below would otherwise not be about Go
    proc = cli_fork.run([FRAMEWORK_BIN, "env", "build", "dev", "--json"], cwd=demo.root, env=env,
                          capture_output=True, text=True, timeout=120)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["error"]["code"] == "tool_missing"
    assert "`go` toolchain" in doc["error"]["message"] and "Traceback" not in proc.stderr


GO_MAIN = """package main

import (
\t"fmt"
\t"net/http"
\t"os"
)

func main() {
\thttp.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
\thttp.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from go") })
\tif err := http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil); err != nil {
\t\tpanic(err)
\t}
}
"""


def test_go_build_is_built_released_and_deployed_on_the_process_runtime(demo):
    """`env build` build type `go` (docs/reference-deploy.md#commands): `go build` of a tiny Go workload,
    its binary cut into a release and deployed on the process runtime (healthy, serving)."""
    import urllib.request

    from deploy_fixtures import free_port

    hello = demo.root / "services" / "hello"
    hello.mkdir()
    (hello / "go.mod").write_text("module example.com/hello\n\ngo 1.21\n")
    (hello / "main.go").write_text(GO_MAIN)
    port = free_port()
    env_dir = demo.root / "deploy" / "kcl" / "gohello"
    env_dir.mkdir()
    (env_dir / "main.k").write_text(
        'import framework\n\nenvironment = framework.Environment {\n    name = "gohello"\n    kind = "local"\n'
        '    target = framework.Process {}\n    workloads = [framework.Workload {\n        name = "hello"\n'
        '        build = framework.Build {type = "go", context = "services/hello", artifacts = ["bin/hello"]}\n'
        '        run = ["bin/hello"]\n'
        f'        ports = [framework.Port {{port = {port}}}]\n'
        '        health = framework.HealthCheck {path = "/healthz"}\n    }]\n}\n')
    with (demo.root / ".gitignore").open("a") as ignore:
        ignore.write("bin/\n")
    demo.commit("go workload")
    code, doc = demo.json("env", "build", "gohello", "--release", "g1")
    assert code == 0, doc
    assert [(b["workload"], b["type"], b["status"]) for b in doc["builds"]] == [("hello", "go", "built")]
    assert (demo.root / "bin" / "hello").is_file()
    code, dep = demo.json("env", "deploy", "gohello", "g1", "--yes", "--stability-window", "0.3")
    assert code == 0, dep
    assert dep["rollout"]["phase"] == "ready"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as resp:
        assert resp.read() == b"hello from go"


def test_docker_build_without_daemon_and_remote_build_fail_clearly(demo):
    """`docker` fails clearly where no Docker daemon is reachable; `remote` where no control plane is."""
    code, doc = demo.json("env", "build", "cluster")  # cluster's workloads are docker builds
    assert (
        code == 1 and doc["error"]["code"] == "tool_missing" and "docker" in doc["error"]["message"].lower()
    )
    set_build(demo, 'framework.Build {type = "remote"}')
    code, doc = demo.json("env", "build", "dev")
    assert code == 1 and doc["error"]["code"] == "tool_missing" and "control plane" in doc["error"]["message"]


def test_no_build_without_release_is_refused(demo):
    """--no-build only harvests digests for --release."""
    code, doc = demo.json("env", "build", "dev", "--no-build")
    assert code == 1 and doc["error"]["code"] == "invalid_input"


def test_gate_record_forms_and_exit_codes(demo, tmp_path):
    """gate record: --name/--status/--summary or --from (gate JSON or any --json output of ours);
    --promotion/--release exit 3 when the environment moved on; a failed gate exits 0; idempotent."""
    code, doc = demo.json("gate", "record", "dev", "--name", "smoke", "--status", "passed")
    assert code == 1 and doc["error"]["code"] == "no_promotion"
    demo.run("env", "build", "dev", "--release", "v1", check=True)
    code, dep = demo.json("env", "deploy", "dev", "v1", "--yes", "--no-wait")
    pid = dep["promotion"]["id"]
    code, doc = demo.json(
        "gate",
        "record",
        "dev",
        "--name",
        "e2e",
        "--status",
        "failed",
        "--summary",
        "2 of 9 failed",
        "--release",
        "v1",
        "--run-id",
        "77.1",
    )
    assert code == 0 and [g["name"] for g in doc["recorded"]] == ["e2e"]
    code, doc = demo.json("gate", "record", "dev", "--name", "e2e", "--status", "failed", "--run-id", "77.1")
    assert code == 0 and doc["recorded"] == [] and len(doc["already_recorded"]) == 1
    ours = tmp_path / "status.json"
    ours.write_text(demo.run("env", "status", "dev", "--json").stdout)
    code, doc = demo.json(
        "gate", "record", "dev", "--from", str(ours), "--name", "status", "--promotion", pid
    )
    assert code == 0 and doc["recorded"][0]["status"] in ("passed", "failed")
    shaped = tmp_path / "gate.json"
    shaped.write_text(json.dumps({"name": "lint", "status": "passed", "summary": "clean", "run_id": "5.2"}))
    assert demo.json("gate", "record", "dev", "--from", str(shaped))[0] == 0
    code, doc = demo.json("gate", "record", "dev", "--name", "x", "--status", "passed", "--release", "v0")
    assert code == 3 and doc["error"]["code"] == "promotion_conflict"
    code, doc = demo.json(
        "gate", "record", "dev", "--name", "x", "--status", "passed", "--promotion", "prm_old"
    )
    assert code == 3
    code, doc = demo.json("gate", "record", "dev", "--name", "x", "--status", "weird")
    assert code == 1
    code, doc = demo.json("gate", "record", "cloud", "--name", "x", "--status", "passed")
    assert code == 2 and doc["error"]["code"] == "control_plane_unreachable"  # hosted: gates live there
    code, listed = demo.json("gate", "list", "dev")
    assert [g["name"] for g in listed["gates"]] == ["e2e", "status", "lint"]
    assert listed["promotion_id"] == pid
