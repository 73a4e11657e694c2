"""The demo's GitHub Actions workflow (examples/demo/.github/workflows/deploy-staging.yml) uses the CI
helpers end to end: build, release, verify, deploy staging, gate, timeline, summarize
(docs/reference-ci.md#github-actions). This test runs its steps' commands in order on a copy of the demo, as the
runner would: bash -eo pipefail per step, $GITHUB_ENV carried between steps, $GITHUB_STEP_SUMMARY,
the run id variables; `uses:` steps and the install step are the runner's (skipped, and said so)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture  # noqa: E402,F401

WORKFLOW = Path(".github") / "workflows" / "deploy-staging.yml"
EXPRESSION = re.compile(r"\$\{\{.*?\}\}")


def run_steps(demo, ci_dir: Path) -> list[dict]:
    doc = yaml.safe_load((demo.root / WORKFLOW).read_text())
    job = doc["jobs"]["staging"]
    files = {k: ci_dir / k.lower() for k in ("GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")}
    for f in files.values():
        f.write_text("")
    env = {**demo.env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{demo.env['PATH']}",
           "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_RUN_ID": "424242", "GITHUB_RUN_ATTEMPT": "1",
           "GITHUB_REPOSITORY": "acme/demo", "GITHUB_WORKSPACE": str(demo.root),
           **{k: str(v) for k, v in files.items()}}
    for key, value in (job.get("env") or {}).items():
        env[key] = EXPRESSION.sub("", str(value))  # secrets are empty outside GitHub, as for a fork's run
    results, failed = [], False
    for step in job["steps"]:
        name = step.get("name") or step.get("uses") or step.get("id")
        if "uses" in step or step.get("id") == "install":
            results.append({"name": name, "skipped": "the runner's (checkout, setup, install)"})
            continue
        if failed and step.get("if") != "always()":
            results.append({"name": name, "skipped": "an earlier step failed"})
            continue
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              cwd=demo.root, env=env, capture_output=True, text=True, timeout=300)
        for line in files["GITHUB_ENV"].read_text().splitlines():  # what a step exports reaches the next ones
            key, _, value = line.partition("=")
            env[key] = value
        files["GITHUB_ENV"].write_text("")
        results.append({"name": name, "code": proc.returncode, "stderr": proc.stderr[-2000:]})
        if proc.returncode and not step.get("continue-on-error"):
            failed = True
    return results


def test_the_demo_workflow_runs_end_to_end(demo, tmp_path):
    """Every `run:` step succeeds in order; the release, promotion, rollout and gate record the run id
    (424242.1); `ci run` sees them all passed; the step summary holds each document's section."""
    ci_dir = tmp_path / "ci"
    ci_dir.mkdir()
    results = run_steps(demo, ci_dir)
    ran = [r for r in results if "code" in r]
    assert [r["name"] for r in results if "skipped" in r] == ["actions/checkout@v4", "actions/setup-python@v5",
                                                              "Install the framework"]
    assert [r["name"] for r in ran] == [
        "Doctor (what a deploy needs)", "Every environment renders", "Build and cut the release",
        "Verify the release's artifacts", "Deploy staging", "Gate on staging's status", "Timeline of this run",
        "Step summary"]
    for r in ran[1:]:
        assert r["code"] == 0, r
    release = json.loads((demo.root / ".framework" / "releases" / "ci-424242.1.json").read_text())
    assert release["run_id"] == "424242.1"
    timeline = json.loads((demo.root / "ci-run.json").read_text())
    assert timeline["verdict"] == "passed" and timeline["run_id"] == "424242"
    assert [s["kind"] for s in timeline["stages"]] == ["cut", "promotion", "rollout", "gate"]
    assert {s["run_id"] for s in timeline["stages"]} == {"424242.1"}
    summary = (ci_dir / "github_step_summary").read_text()
    for heading in ("ci-run — `ci-run.json`", "deploy — `deploy.json`", "release-verify — `verify.json`",
                    "doctor — `doctor.json`", "### ✅ status — `status.json`"):
        assert heading in summary, summary
    assert "| api | ready |" in summary and "| staging | ci-424242.1 | prm_" in summary  # status tables
    assert "| cut | " in summary and "| gate | staging | status | passed | 424242.1 |" in summary
