"""`framework doctor` (docs/reference-ci.md#commands): each check with status, detail and the fix;
`--signal deploy` keeps what a deploy needs; `--verbose`; non-zero exactly when an error-level check
fails. Real toolchains, a real machine ledger, a real `platform server`, real credential files."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from ci_fixtures import project_fixture  # noqa: E402,F401
from webhooks_fixtures import server_factory  # noqa: E402,F401

MACHINE = {"port-blocks", "dev-stack-ceiling", "server", "daemon"}


def declare(project, name: str, body: str) -> None:
    path = project.root / "deploy" / "kcl" / name / "main.k"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'import framework\n\nenvironment = framework.Environment {{\n    name = "{name}"\n{body}\n}}\n')


LOCAL = """    kind = "local"
    target = framework.Process {}
    workloads = [framework.Workload {
        name = "api"
        build = framework.Build {type = "go", main = "./cmd/api"}
        run = ["python3", "main.py"]
    }]"""


def checks(doc) -> dict[str, dict]:
    return {c["name"]: c for c in doc["checks"]}


def test_healthy_project_exits_0_with_every_check_described(project):
    """Each check has status, detail and fix; toolchains per build type (go) and run command; the ledger;
    machine checks (port blocks, ceiling, server, daemon); exit 0 when no error-level check fails."""
    declare(project, "dev", LOCAL)
    code, doc = project.json("doctor")
    assert code == 0, doc
    found = checks(doc)
    assert set(found) >= {"project", "kcl", "toolchain:go", "toolchain:python3", "ledger"} | MACHINE
    assert found["toolchain:go"]["status"] == "ok" and found["toolchain:go"]["detail"].startswith("go version go")
    assert found["kcl"]["detail"] == "1 environment(s) evaluate: dev"
    assert found["server"]["status"] == "skip" and found["daemon"]["status"] == "ok"
    for c in doc["checks"]:
        assert set(c) >= {"status", "detail", "fix"} and c["status"] in ("ok", "warn", "error", "skip")
    assert doc["counts"]["error"] == 0
    quiet, verbose = project.run("doctor"), project.run("doctor", "--verbose")
    assert "ok    toolchain:go\n" in quiet.stdout and "ok    toolchain:go: go version" in verbose.stdout


def test_error_level_checks_exit_1_with_their_fix(project):
    """A missing run program and an environment that does not evaluate are errors: exit 1, each with a fix."""
    declare(project, "dev", LOCAL.replace('"python3", "main.py"', '"no-such-program-19", "x"'))
    declare(project, "broken", "    kind = 12")
    code, doc = project.json("doctor")
    found = checks(doc)
    assert code == 1 and doc["error"]["code"] == "doctor_failed"
    assert found["toolchain:no-such-program-19"]["status"] == "error"
    assert "not on PATH" in found["toolchain:no-such-program-19"]["detail"]
    assert found["kcl"]["status"] == "error" and "broken" in found["kcl"]["detail"]
    assert found["kcl"]["fix"] and found["toolchain:no-such-program-19"]["fix"]
    proc = project.run("doctor")
    assert proc.returncode == 1 and "fix: " in proc.stdout


def test_signal_deploy_keeps_what_a_deploy_needs(project):
    """--signal deploy limits the checks to a deploy's needs (no port blocks, server, daemon);
    an unknown signal is a usage error (2)."""
    declare(project, "dev", LOCAL)
    code, doc = project.json("doctor", "--signal", "deploy")
    assert code == 0 and doc["signal"] == "deploy"
    names = set(checks(doc))
    assert not names & MACHINE and {"project", "kcl", "ledger", "toolchain:go"} <= names
    code, doc = project.json("doctor", "--signal", "nope")
    assert code == 2 and "deploy" in doc["error"]["hint"]


def test_credentials_per_control_plane_with_expiry(project):
    """Credentials per declared control plane: none is an error, a login expiring within 7 days a
    warning, the declared token variable ok (named, never shown)."""
    declare(project, "cloud", '    kind = "hosted"\n    control_plane = framework.ControlPlane '
                              '{endpoint = "http://127.0.0.1:9", token_env = "CP_TOKEN"}')
    code, doc = project.json("doctor", "--signal", "deploy")
    cred = checks(doc)["credentials:http://127.0.0.1:9"]
    assert code == 1 and cred["status"] == "error" and "framework login --endpoint http://127.0.0.1:9" in cred["fix"]
    code, doc = project.json("doctor", "--signal", "deploy", extra_env={"CP_TOKEN": "tok-secret-19"})
    cred = checks(doc)["credentials:http://127.0.0.1:9"]
    assert code == 0 and cred["status"] == "ok" and "env:CP_TOKEN" in cred["detail"]
    assert "tok-secret-19" not in json.dumps(doc)
    creds = Path(project.env["HOME"]) / ".config" / "framework" / "credentials.json"
    creds.parent.mkdir(parents=True)
    entry = {"access_token": "stored-secret", "expires_at": time.time() + 2 * 86400, "program": "framework"}
    creds.write_text(json.dumps({"entries": {"http://127.0.0.1:9": entry}}))
    creds.chmod(0o600)
    code, doc = project.json("doctor", "--signal", "deploy")
    cred = checks(doc)["credentials:http://127.0.0.1:9"]
    assert code == 0 and cred["status"] == "warn" and "expires in 2.0 days" in cred["detail"], cred
    creds.write_text(json.dumps({"entries": {"http://127.0.0.1:9": {**entry, "expires_at": time.time() - 60}}}))
    code, doc = project.json("doctor", "--signal", "deploy")
    assert code == 1 and "expired" in checks(doc)["credentials:http://127.0.0.1:9"]["detail"]
    creds.write_text("{corrupt")
    code, doc = project.json("doctor", "--signal", "deploy")
    assert code == 1 and "corrupt" in checks(doc)["credentials:http://127.0.0.1:9"]["detail"]


def test_ledger_unreadable_is_an_error_and_a_file_ledger_is_stale(project, tmp_path):
    """Ledger readable and not stale: legacy .framework/promotions/*.jsonl warns (no longer read, import it);
    an unreadable machine ledger is an error."""
    declare(project, "dev", LOCAL)
    legacy = project.root / ".framework" / "promotions"
    legacy.mkdir(parents=True)
    (legacy / "dev.jsonl").write_text("{}\n")
    code, doc = project.json("doctor")
    ledger = checks(doc)["ledger"]
    assert code == 0 and ledger["status"] == "warn" and "ledger import --from-file-ledger" in ledger["fix"]
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    code, doc = project.json("doctor", extra_env={"FRAMEWORK_LEDGER_HOME": str(blocker)})
    assert code == 1 and checks(doc)["ledger"]["status"] == "error"


def test_port_blocks_and_the_dev_stack_ceiling(project):
    """Port blocks: a corrupt registry is an error; every block held (dev_stack.max_stacks) warns."""
    declare(project, "dev", LOCAL)
    project.config("dev_stack:\n  max_stacks: 1\n")
    assert project.run("env", "devstack", "port", "8080").returncode == 0  # allocates this checkout's block
    code, doc = project.json("doctor")
    assert code == 0 and checks(doc)["dev-stack-ceiling"]["status"] == "warn"
    (project.root / ".framework" / "blocks.json").write_text("{not json")
    code, doc = project.json("doctor")
    assert code == 1 and checks(doc)["port-blocks"]["status"] == "error"


def test_server_reachable_and_daemon_state(project, server_factory):  # noqa: F811
    """Server reachable (a real `platform server`), unreachable warns; a leftover daemon record warns."""
    server = server_factory()
    declare(project, "dev", LOCAL)
    code, doc = project.json("doctor", extra_env={"PLATFORM_SERVER_URL": server.url, "PLATFORM_TOKEN": server.token})
    srv = checks(doc)["server"]
    assert code == 0 and srv["status"] == "ok" and "reachable, logged in" in srv["detail"]
    server.stop()
    code, doc = project.json("doctor", extra_env={"PLATFORM_SERVER_URL": server.url})
    assert code == 0 and checks(doc)["server"]["status"] == "warn"
    inst = Path(project.env["HOME"]) / ".platform" / "instances" / "default"
    inst.mkdir(parents=True)
    (inst / "runtime.json").write_text(json.dumps({"state": "awaiting_credentials", "pid": 1}))
    code, doc = project.json("doctor")
    daemon = checks(doc)["daemon"]
    assert code == 0 and daemon["status"] == "warn" and "leftover" in daemon["detail"]
