"""`ci run <run-id>` and the run id every cut, gate and promotion made inside CI records
(docs/reference-ci.md#the-ci-run-id; `ci run` and its exit codes: docs/reference-ci.md#commands)."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from deploy_fixtures import demo_fixture  # noqa: E402,F401

from engine.ci_environment import current_run, current_run_id, matches  # noqa: E402

FAST = ("--stability-window", "0.3")
GITHUB = {"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "777001", "GITHUB_RUN_ATTEMPT": "1",
          "GITHUB_REPOSITORY": "acme/demo", "GITHUB_SERVER_URL": "https://github.com"}


@pytest.mark.parametrize("env, run_id, provider", [
    (GITHUB, "777001.1", "github"),
    ({"GITHUB_RUN_ID": "5", "GITHUB_RUN_ATTEMPT": "3"}, "5.3", "github"),
    ({"GITLAB_CI": "true", "CI_PIPELINE_ID": "42", "CI_JOB_ID": "1001"}, "42.1001", "gitlab"),
    ({"BUILDKITE": "true", "BUILDKITE_BUILD_ID": "0190-aa", "BUILDKITE_RETRY_COUNT": "2"}, "0190-aa.3", "buildkite"),
    ({"BUILDKITE_BUILD_ID": "b1"}, "b1.1", "buildkite"),
    ({"CIRCLECI": "true", "CIRCLE_WORKFLOW_ID": "wf-9", "CIRCLE_BUILD_NUM": "17"}, "wf-9.17", "circleci"),
])
def test_run_id_from_each_ci_includes_the_attempt(env, run_id, provider):
    """Gate run id includes the CI attempt number; GitHub Actions, GitLab CI, Buildkite, CircleCI are read."""
    run = current_run(env)
    assert run is not None and run.provider == provider and run.run_id == run_id


def test_outside_ci_there_is_no_run_id_and_attempts_match_their_run():
    """Outside CI no run id is recorded; `ci run <run>` covers every attempt `<run>.<n>`, not other runs."""
    assert current_run_id({"HOME": "/x", "CI": "true"}) is None
    assert matches("777001.2", "777001") and matches("777001.2", "777001.2")
    assert not matches("7770011.1", "777001") and not matches(None, "777001")


def _ci(demo, **extra):
    env = {**demo.env, **GITHUB, **extra}
    return env


def run_in_ci(demo, env, *args):
    import json

    from deploy_fixtures import FRAMEWORK_BIN

    proc = cli_fork.run([FRAMEWORK_BIN, *args, "--json"], cwd=demo.root, env=env, capture_output=True,
                          text=True, timeout=180)
    doc = json.loads(proc.stdout)
    assert doc["exit_code"] == proc.returncode and doc["ok"] == (proc.returncode == 0)
    return proc.returncode, doc


def test_ci_run_timeline_of_cut_promotion_rollout_and_gates(demo):
    """A deploy and gates made inside CI record the run id; `ci run` lists cut, promotion, rollout and
    gate checks; exit 0 when all passed (skipped counts), 1 once a stage failed, 5 while one runs."""
    env = _ci(demo)
    code, deployed = run_in_ci(demo, env, "env", "deploy", "dev", "--yes", *FAST)
    assert code == 0, deployed
    release = deployed["target"]["release"]
    assert deployed["promotion"]["run_id"] == "777001.1"
    code, _ = run_in_ci(demo, env, "gate", "record", "dev", "--name", "smoke", "--status", "passed")
    assert code == 0
    code, _ = run_in_ci(demo, env, "gate", "record", "dev", "--name", "lint", "--status", "skipped")
    assert code == 0
    # default run id from the CI environment: every attempt of this run
    code, doc = run_in_ci(demo, env, "ci", "run")
    assert code == 0, doc
    kinds = [(s["kind"], s["name"] if s["kind"] != "promotion" else "p", s["status"]) for s in doc["stages"]]
    assert kinds[:3] == [("cut", release, "passed"), ("promotion", "p", "passed"), ("rollout", release, "passed")]
    assert sorted(kinds[3:]) == [("gate", "lint", "skipped"), ("gate", "smoke", "passed")]
    assert doc["run_id"] == "777001" and doc["sources"] == ["machine-ledger"] and doc["verdict"] == "passed"
    # a second attempt fails a check: the run fails; attempt 1 alone still passed
    env2 = _ci(demo, GITHUB_RUN_ATTEMPT="2")
    run_in_ci(demo, env2, "gate", "record", "dev", "--name", "e2e", "--status", "failed", "--summary", "3 failed")
    code, doc = demo.json("ci", "run", "777001")
    assert code == 1 and doc["error"]["code"] == "stage_failed" and "e2e" in doc["error"]["message"]
    code, doc = demo.json("ci", "run", "777001.1")
    assert code == 0 and all(s["run_id"] == "777001.1" for s in doc["stages"])
    # a retried check that passes replaces its failed attempt
    env3 = _ci(demo, GITHUB_RUN_ATTEMPT="3")
    run_in_ci(demo, env3, "gate", "record", "dev", "--name", "e2e", "--status", "passed")
    code, doc = demo.json("ci", "run", "777001")
    assert code == 0, doc
    # a check still pending: exit 5
    run_in_ci(demo, env3, "gate", "record", "dev", "--name", "canary", "--status", "pending")
    code, doc = demo.json("ci", "run", "777001", "--env", "dev")
    assert code == 5 and doc["error"]["code"] == "stage_running"
    # --env filters: nothing of this run touched staging
    code, doc = demo.json("ci", "run", "777001", "--env", "staging")
    assert code == 5 and doc["stages"] == [] and doc["verdict"] == "empty"
    # human output names each stage
    proc = demo.run("ci", "run", "777001.1")
    assert proc.returncode == 0 and "promotion" in proc.stdout and "smoke" in proc.stdout


def test_ci_run_empty_timeline_exits_5_and_no_run_id_outside_ci_is_usage(demo):
    """An empty timeline exits 5; without a run id outside CI the request cannot be served."""
    code, doc = demo.json("ci", "run", "nothing-here")
    assert code == 5 and doc["error"]["code"] == "timeline_empty"
    code, doc = demo.json("ci", "run")
    assert code == 2 and doc["error"]["code"] == "usage"
    code, doc = demo.json("ci", "run", "  ")
    assert code == 2


def test_cut_outside_ci_records_no_run_id_inside_ci_does(demo):
    """A release cut inside CI records the run id; outside CI none."""
    import json

    demo.run("env", "build", "dev", "--release", "v-local", check=True)
    assert json.loads((demo.root / ".framework/releases/v-local.json").read_text())["run_id"] is None
    code, _ = run_in_ci(demo, _ci(demo, GITHUB_RUN_ATTEMPT="4"), "env", "build", "dev", "--release", "v-ci")
    assert code == 0
    assert json.loads((demo.root / ".framework/releases/v-ci.json").read_text())["run_id"] == "777001.4"


def test_ci_run_for_an_environment_on_a_control_plane_exits_2(demo):
    """Control plane could not be read: exit 2 (the demo's `cloud` declares framework.ControlPlane)."""
    code, doc = demo.json("ci", "run", "777001", "--env", "cloud")
    assert code == 2 and doc["error"]["code"] == "control_plane_unreachable"


def test_ledger_from_before_run_ids_gains_the_column(tmp_path):
    """A machine ledger created before promotions recorded run ids still opens, and records them."""
    from engine.ledger.store import Ledger

    path = tmp_path / "ledger.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE promotions (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, project TEXT NOT "
        "NULL, env TEXT NOT NULL, release TEXT NOT NULL, images TEXT NOT NULL, direction TEXT NOT NULL, previous_id "
        "TEXT, plan_digest TEXT, supersede INTEGER NOT NULL DEFAULT 0, source TEXT NOT NULL DEFAULT 'deploy', who "
        "TEXT NOT NULL, created_at REAL NOT NULL);"
        "INSERT INTO promotions (id, project, env, release, images, direction, who, created_at) "
        "VALUES ('prm_old', 'demo', 'dev', 'v0', '{}', 'AHEAD', 'x', 1.0);")
    old.close()
    with Ledger.open("demo", path) as ledger:
        assert ledger.get("prm_old").run_id is None
        p = ledger.append_promotion("dev", "v1", {}, direction="AHEAD", expected_current=None, run_id="9.1")
        assert ledger.for_run("9").promotions == [p] and p.run_id == "9.1"
